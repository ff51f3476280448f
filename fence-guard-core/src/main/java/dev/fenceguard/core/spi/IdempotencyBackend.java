package dev.fenceguard.core.spi;

import dev.fenceguard.core.LockKey;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;

/**
 * What an idempotency store must do for fence-guard: one entry per key, changed only by the two atomic
 * steps of {@link IdempotencyRules}. Users do not call this directly: they wrap it in a
 * {@link dev.fenceguard.core.idempotency.IdempotencyStore}, which validates input, runs the work,
 * classifies the answers and measures.
 *
 * <p>As for {@link LockBackend}: every method is one round trip, atomic on the server, asynchronous;
 * the backend makes the server give up by {@code timeout} and completes with what it answered, while
 * the {@link dev.fenceguard.core.idempotency.IdempotencyStore} ends the caller's wait at {@code timeout}
 * (failing with {@link dev.fenceguard.core.ErrorCode#TIMEOUT}); judged by
 * the backend's clock, and fails with a mapped {@link dev.fenceguard.core.FenceGuardException}.
 * Arguments arrive validated. Fences are the callers' lease fences: the backend never issues one, it
 * only compares them. Implementations must be thread-safe; the testkit's
 * {@code IdempotencyBackendContract} checks all of this.
 *
 * @since 0.1
 */
public interface IdempotencyBackend {

    /** A short name for logs and metric tags, e.g. {@code postgres}. */
    String name();

    /**
     * Applies {@link IdempotencyRules#claim} to the entry of {@code key} in one atomic step.
     *
     * @param fingerprint the request's fingerprint (lowercase hex, 1 to 128 characters)
     * @param fence the claimant's lease fence
     * @param ttl how long the claim holds off newer holders, from backend now
     * @param retention how long the entry is kept after the claim runs out
     * @return the entry as it stands after the step (the caller's own claim, or what stopped it)
     */
    CompletionStage<IdempotencyEntry> claim(LockKey key, String fingerprint, long fence, Duration ttl, Duration retention,
            Duration timeout);

    /**
     * Applies {@link IdempotencyRules#record} to the entry of {@code key} in one atomic step.
     *
     * @param state a state other than {@link IdempotencyState#IN_PROGRESS}
     * @param result the encoded result or failure reason (may be empty)
     * @param retention how long the outcome is kept, from backend now
     * @return empty if the outcome was recorded; otherwise the fence of the entry that refused it (0 if there is none)
     */
    CompletionStage<OptionalLong> record(LockKey key, long fence, IdempotencyState state, byte[] result, Duration retention,
            Duration timeout);

    /** The entry of {@code key}, unless there is none or its retention has passed. */
    CompletionStage<Optional<IdempotencyEntry>> lookup(LockKey key, Duration timeout);

    /**
     * Deletes at most {@code limit} entries whose retention has passed, in one round trip.
     * A backend whose entries expire by themselves (Redis) deletes nothing and answers 0.
     *
     * @return how many were deleted
     */
    CompletionStage<Integer> purge(int limit, Duration timeout);
}
