package dev.fenceguard.core.idempotency;

/**
 * Where an {@link IdempotencyStore} counts the calls it answers without running their work (meter
 * {@code fenceguard.idempotency}, see {@code docs/metrics.md}). {@link #automatic()} uses Micrometer's
 * global registry when Micrometer is on the class path and does nothing otherwise; pass
 * {@link dev.fenceguard.core.micrometer.MicrometerIdempotencyMetrics#of} to use a registry of your own.
 * Implementations must be fast and thread-safe; one that throws is logged and ignored.
 *
 * @since 0.1
 */
@FunctionalInterface
public interface IdempotencyMetrics {

    /** How an idempotent call was answered without running its work. */
    enum Answer {
        /** A recorded outcome was replayed (a completed result or a final failure). */
        HIT,
        /** The key was claimed with a different request fingerprint. */
        CONFLICT,
        /** Another holder's claim was still live. */
        IN_PROGRESS
    }

    /** An idempotency store on {@code backend} answered {@code answer} instead of running the work. */
    void answered(String backend, Answer answer);

    /** Micrometer's global registry if Micrometer is present, otherwise {@link #none()}. */
    static IdempotencyMetrics automatic() {
        return dev.fenceguard.core.internal.Micrometer.present() ? dev.fenceguard.core.micrometer.MicrometerIdempotencyMetrics.global() : none();
    }

    /** Metrics that record nothing (and are not even called). */
    static IdempotencyMetrics none() {
        return NoIdempotencyMetrics.INSTANCE;
    }
}

enum NoIdempotencyMetrics implements IdempotencyMetrics {
    INSTANCE;

    @Override
    public void answered(String backend, Answer answer) {}
}
