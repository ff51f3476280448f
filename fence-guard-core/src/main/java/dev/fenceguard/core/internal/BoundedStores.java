package dev.fenceguard.core.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyEntry;
import dev.fenceguard.core.spi.IdempotencyState;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The client's half of the timeout contract for the primitives' stores (see {@link IdempotencyBackend}
 * and {@link FlightStore}): the store makes its server give up by the timeout and completes with what
 * the server answered; these views end the caller's wait at the timeout with {@code TIMEOUT}, on the
 * process's one timer ({@link Timer#deadlines()}). Late answers are dropped: an idempotency claim or a
 * flight start that arrives late holds nothing a release could give back before its own expiry.
 */
public final class BoundedStores {

    private BoundedStores() {}

    /** {@code backend}, each call bounded by its {@code timeout} on the client side. */
    public static IdempotencyBackend idempotency(IdempotencyBackend backend) {
        return new IdempotencyBackend() {
            @Override
            public String name() {
                return backend.name();
            }

            @Override
            public CompletionStage<IdempotencyEntry> claim(LockKey key, String fingerprint, long fence, Duration ttl,
                    Duration retention, Duration timeout) {
                return bounded(timeout, key, "idempotency claim", () -> backend.claim(key, fingerprint, fence, ttl, retention, timeout));
            }

            @Override
            public CompletionStage<OptionalLong> record(LockKey key, long fence, IdempotencyState state, byte[] result,
                    Duration retention, Duration timeout) {
                return bounded(timeout, key, "idempotency record", () -> backend.record(key, fence, state, result, retention, timeout));
            }

            @Override
            public CompletionStage<Optional<IdempotencyEntry>> lookup(LockKey key, Duration timeout) {
                return bounded(timeout, key, "idempotency lookup", () -> backend.lookup(key, timeout));
            }

            @Override
            public CompletionStage<Integer> purge(int limit, Duration timeout) {
                return bounded(timeout, null, "idempotency purge", () -> backend.purge(limit, timeout));
            }

            @Override
            public String toString() {
                return backend.toString();
            }
        };
    }

    /** {@code store}, each call bounded by its {@code timeout} on the client side ({@code watch} has none). */
    public static FlightStore flights(FlightStore store) {
        return new FlightStore() {
            @Override
            public String name() {
                return store.name();
            }

            @Override
            public CompletionStage<Optional<FlightResult>> read(LockKey key, Duration timeout) {
                return bounded(timeout, key, "singleflight read", () -> store.read(key, timeout));
            }

            @Override
            public CompletionStage<FlightStart> begin(LockKey key, long fence, Duration timeout) {
                return bounded(timeout, key, "singleflight begin", () -> store.begin(key, fence, timeout));
            }

            @Override
            public CompletionStage<WriteOutcome> publish(LockKey key, long fence, byte[] result, Duration retention,
                    Duration timeout) {
                return bounded(timeout, key, "singleflight publish", () -> store.publish(key, fence, result, retention, timeout));
            }

            @Override
            public CompletionStage<Void> wake(LockKey key, Duration timeout) {
                return bounded(timeout, key, "singleflight wake", () -> store.wake(key, timeout));
            }

            @Override
            public CompletionStage<FlightWatch> watch(LockKey key, Runnable onChange) {
                return store.watch(key, onChange);
            }

            @Override
            public String toString() {
                return store.toString();
            }
        };
    }

    private static <T> CompletionStage<T> bounded(Duration timeout, LockKey key, String operation,
            Supplier<? extends CompletionStage<T>> call) {
        String subject = key == null ? null : key.value();
        return Timer.bounded(timeout, () -> new FenceGuardException(ErrorCode.TIMEOUT,
                subject, operation + " got no answer within " + timeout + "; gave up waiting"), call, null);
    }
}
