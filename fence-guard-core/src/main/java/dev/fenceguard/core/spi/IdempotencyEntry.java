package dev.fenceguard.core.spi;

import java.time.Instant;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * What an {@link IdempotencyBackend} holds for one key, as of one atomic step.
 *
 * @param state where the operation stands
 * @param fingerprint the request fingerprint of the claim that created the entry (lowercase hex)
 * @param fence the fence of the newest holder: the one that claimed last, or that recorded the outcome
 * @param expiresAt for {@link IdempotencyState#IN_PROGRESS}, when the holder's claim runs out by the
 *     backend's clock (a newer holder may then take over); otherwise when the outcome was recorded
 * @param retainUntil when the entry may be purged, by the backend's clock; from then on it counts as absent
 * @param result the recorded result or failure reason (empty while in progress or after a retryable failure)
 * @since 0.1
 */
public record IdempotencyEntry(IdempotencyState state, String fingerprint, long fence, Instant expiresAt,
        Instant retainUntil, byte[] result) {

    /** Checks that no component is null and copies the result. */
    public IdempotencyEntry {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(expiresAt, "expiresAt");
        Objects.requireNonNull(retainUntil, "retainUntil");
        result = Objects.requireNonNull(result, "result").clone();
    }

    /** A copy of the result bytes. */
    @Override
    public byte[] result() {
        return result.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IdempotencyEntry e && state == e.state && fingerprint.equals(e.fingerprint) && fence == e.fence
                && expiresAt.equals(e.expiresAt) && retainUntil.equals(e.retainUntil) && Arrays.equals(result, e.result);
    }

    @Override
    public int hashCode() {
        return Objects.hash(state, fingerprint, fence, expiresAt, retainUntil, Arrays.hashCode(result));
    }

    @Override
    public String toString() {
        String r = result.length <= 16 ? HexFormat.of().formatHex(result) : result.length + " bytes";
        return "IdempotencyEntry[" + state + ", fence=" + fence + ", expiresAt=" + expiresAt + ", retainUntil=" + retainUntil
                + ", result=" + r + "]";
    }
}
