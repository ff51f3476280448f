package dev.fenceguard.core.idempotency;

import dev.fenceguard.core.FenceToken;
import java.time.Instant;
import java.util.Objects;

/**
 * What an idempotency store holds for one key, for diagnostics: where the operation stands, under
 * whose fence, and until when. It never carries the recorded result: ask with the work to get that.
 *
 * @param key the idempotency key
 * @param status where the operation stands
 * @param fingerprint the fingerprint of the request that claimed the key
 * @param fence the fence of the newest holder: the one that claimed last, or that recorded the outcome
 * @param expiresAt for {@link Status#IN_PROGRESS}, when the holder's claim runs out by the store's clock
 *     (a newer holder may then take over); otherwise when the outcome was recorded
 * @param retainUntil when the entry is forgotten, by the store's clock
 * @since 0.1
 */
public record IdempotencyInfo(String key, Status status, Fingerprint fingerprint, FenceToken fence, Instant expiresAt,
        Instant retainUntil) {

    /** Where an idempotent operation stands. */
    public enum Status {
        /** A holder has claimed the key and is running the work. */
        IN_PROGRESS,
        /** The work succeeded; its result is replayed to every retry. */
        COMPLETED,
        /** The work failed in a way worth retrying: the next claim runs it again. */
        FAILED_RETRYABLE,
        /** The work failed for good; every retry gets {@link IdempotencyResult.FailedFinally}. */
        FAILED_FINAL
    }

    /**
     * Checks that no component is null.
     *
     * @throws NullPointerException if a component is null
     */
    public IdempotencyInfo {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(fence, "fence");
        Objects.requireNonNull(expiresAt, "expiresAt");
        Objects.requireNonNull(retainUntil, "retainUntil");
    }
}
