package dev.fenceguard.core.spi;

import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.WriteOutcome;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Where {@link dev.fenceguard.core.singleflight.Singleflight} keeps flights: per flight key, the fence
 * of the newest flight started, and the result last published with its fence and a retention expiry
 * judged by the store's own clock. Users do not call this directly.
 *
 * <p>Like {@link LockBackend}: every method is one round trip (a rejected begin may take a second, to
 * tell a retained result from a newer flight), atomic on the server, asynchronous; the store makes its
 * server give up by {@code timeout} and completes with what it answered, while the
 * {@link dev.fenceguard.core.singleflight.Singleflight} ends the caller's wait at {@code timeout}; it fails with a {@link dev.fenceguard.core.FenceGuardException} carrying a mapped
 * code. Keys arrive validated; fences are lock fences of the flight's lock, so the store never issues
 * any. Implementations must be thread-safe. The testkit's {@code SingleflightContract} checks all of this.
 *
 * @since 0.1
 */
public interface FlightStore {

    /** A short name for logs and metric tags, e.g. {@code postgres}. */
    String name();

    /** The result published for {@code key}, if one is retained now (by the store's clock). */
    CompletionStage<Optional<FlightResult>> read(LockKey key, Duration timeout);

    /**
     * Records that a flight with {@code fence} starts, unless a result is retained (then that result is
     * the answer, and nothing changes) or a flight with a greater fence started already (nothing changes).
     * Starting clears the previous, expired, result. Atomic: "check, then record" happen in one step.
     */
    CompletionStage<FlightStart> begin(LockKey key, long fence, Duration timeout);

    /**
     * Stores {@code result} as the result of {@code key} for {@code retention} (from the store's now),
     * and notifies the {@linkplain #watch watchers}, if and only if {@code fence} is at least the fence
     * of the newest flight started: a zombie's result, published after a newer flight began, is refused
     * and changes nothing.
     *
     * @return {@link WriteOutcome.Applied}, or {@link WriteOutcome.Stale} with the newest flight's fence
     */
    CompletionStage<WriteOutcome> publish(LockKey key, long fence, byte[] result, Duration retention, Duration timeout);

    /**
     * Tells the watchers of {@code key} that its flight ended without a result (the work failed), so
     * they try to take over at once rather than at their next poll. Changes nothing stored.
     */
    CompletionStage<Void> wake(LockKey key, Duration timeout);

    /**
     * Calls {@code onChange} after every {@link #publish} or {@link #wake} of {@code key} from now on, in
     * any process, from a thread of the store (it must not block). Extra calls are allowed (they cost a
     * read); missing ones are not, once the stage has completed.
     *
     * @return a stage that completes when the watch is in place (a notification sent after that
     *     reaches {@code onChange}), or fails if the store cannot listen now; callers then poll
     */
    CompletionStage<FlightWatch> watch(LockKey key, Runnable onChange);

    /**
     * A result as stored: its bytes and the fence of the flight that published it.
     *
     * @param fence the fence of the publishing flight
     * @param value the encoded result (the caller must not modify it)
     */
    record FlightResult(long fence, byte[] value) {
        public FlightResult {
            java.util.Objects.requireNonNull(value, "value");
        }
    }

    /** What {@link #begin} found. */
    sealed interface FlightStart {
        /** The flight is recorded as the newest: compute and publish. */
        record Started() implements FlightStart {}

        /** A result is retained: use it, do not compute. */
        record Retained(FlightResult result) implements FlightStart {}

        /** A flight with the greater fence {@code newest} started already: this one is a zombie. */
        record Superseded(long newest) implements FlightStart {}
    }

    /** An active {@link #watch}; closing it stops the calls. Idempotent. */
    interface FlightWatch extends AutoCloseable {
        @Override
        void close();
    }
}
