package dev.fenceguard.core.singleflight;

import java.time.Duration;

/**
 * Where a {@link Singleflight} reports what it does; see {@code docs/metrics.md}. Implementations must
 * be fast and thread-safe (one that throws is logged and ignored). {@link #automatic()} uses Micrometer's global registry when present.
 *
 * @since 0.1
 */
public interface SingleflightMetrics {

    /** How a flight that this process led ended. */
    enum LedOutcome {
        /** The result was computed and published. */
        PUBLISHED,
        /** The publish was refused: a newer flight had started (this process was a zombie). */
        SUPERSEDED,
        /** The work (or its encoding) failed; nothing was published. */
        FAILED
    }

    /** How a wait for another process's flight ended. */
    enum WaitOutcome {
        /** The other flight's result arrived. */
        RESULT,
        /** The other flight ended without a result, or its lease ran out: this process took over. */
        TOOK_OVER,
        /** The max wait passed first. */
        GAVE_UP
    }

    /** A caller joined a flight already in progress in this process: no round trip of its own. */
    void shared(String store);

    /** This process computed a flight (held its lease and ran the work). */
    void led(String store, LedOutcome outcome);

    /** This process waited {@code waited} for another process's flight. */
    void waited(String store, WaitOutcome outcome, Duration waited);

    /** A flight was answered by a retained result, without computing or waiting. */
    void retained(String store);

    /** Records nothing (and is not even called). */
    static SingleflightMetrics none() {
        return NoSingleflightMetrics.INSTANCE;
    }

    /** Micrometer's global registry if Micrometer is present, otherwise {@link #none()}. */
    static SingleflightMetrics automatic() {
        return dev.fenceguard.core.internal.Micrometer.present() ? dev.fenceguard.core.micrometer.MicrometerSingleflightMetrics.global() : none();
    }
}

enum NoSingleflightMetrics implements SingleflightMetrics {
    INSTANCE;

    @Override
    public void shared(String store) {}

    @Override
    public void led(String store, LedOutcome outcome) {}

    @Override
    public void waited(String store, WaitOutcome outcome, Duration waited) {}

    @Override
    public void retained(String store) {}
}
