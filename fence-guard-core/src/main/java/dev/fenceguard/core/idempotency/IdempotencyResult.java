package dev.fenceguard.core.idempotency;

import dev.fenceguard.core.FenceToken;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * How one {@link IdempotencyStore#call} ended, when it did not fail: the work ran now, its recorded
 * result was replayed, another holder is still running it, or it failed for good earlier.
 *
 * @param <T> the work's result type
 * @since 0.1
 */
public sealed interface IdempotencyResult<T> {

    /** The work's result, if there is one: {@link Executed} and {@link Replayed} have it. */
    Optional<T> result();

    /**
     * The work ran in this call, under {@code fence}, and its result is recorded.
     *
     * @param value the work's result
     * @param fence the fence it ran and was recorded under
     */
    record Executed<T>(T value, FenceToken fence) implements IdempotencyResult<T> {
        /** Checks that {@code fence} is not null. */
        public Executed {
            Objects.requireNonNull(fence, "fence");
        }

        @Override
        public Optional<T> result() {
            return Optional.ofNullable(value);
        }
    }

    /**
     * An earlier attempt completed; this is its recorded result, and the work did not run again.
     *
     * @param value the recorded result, decoded
     * @param fence the fence the result was recorded under
     */
    record Replayed<T>(T value, FenceToken fence) implements IdempotencyResult<T> {
        /** Checks that {@code fence} is not null. */
        public Replayed {
            Objects.requireNonNull(fence, "fence");
        }

        @Override
        public Optional<T> result() {
            return Optional.ofNullable(value);
        }
    }

    /**
     * Another holder claimed the key with an older fence and its claim is still live: it may still be
     * running the work. Try again after {@code expiresAt} (by the backend's clock), when a newer holder
     * may take over if it has not recorded by then.
     *
     * @param holder the fence of the holder running the work
     * @param expiresAt when its claim runs out
     */
    record InProgress<T>(FenceToken holder, Instant expiresAt) implements IdempotencyResult<T> {
        /** Checks that no component is null. */
        public InProgress {
            Objects.requireNonNull(holder, "holder");
            Objects.requireNonNull(expiresAt, "expiresAt");
        }

        @Override
        public Optional<T> result() {
            return Optional.empty();
        }
    }

    /**
     * An earlier attempt failed for good (its work threw {@link FinalFailure}); the work did not run again.
     *
     * @param reason the recorded reason
     * @param fence the fence the failure was recorded under
     */
    record FailedFinally<T>(String reason, FenceToken fence) implements IdempotencyResult<T> {
        /** Checks that no component is null. */
        public FailedFinally {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(fence, "fence");
        }

        @Override
        public Optional<T> result() {
            return Optional.empty();
        }
    }
}
