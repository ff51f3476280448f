package dev.fenceguard.core.memory;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.FlightWatchers;
import dev.fenceguard.core.spi.FlightStore;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A {@link FlightStore} in this process's memory: for users' unit tests (with an
 * {@link InMemoryLockBackend} on the same {@link TimeSource}), and the reference model the testkit's
 * singleflight property compares against. Retention is judged by the given time source. Watchers are
 * called on the thread that publishes or wakes, after the store's own lock is released. Stages are
 * complete when returned. Thread-safe.
 *
 * @since 0.1
 */
public final class InMemoryFlightStore implements FlightStore {

    private record Entry(long flightFence, FlightResult result, Instant expiresAt) {}

    private final TimeSource time;
    private final Map<LockKey, Entry> entries = new HashMap<>();
    private final FlightWatchers watchers = new FlightWatchers();

    /** A store on the system clock. */
    public InMemoryFlightStore() {
        this(TimeSource.system());
    }

    /** A store whose retention is judged by {@code time}. */
    public InMemoryFlightStore(TimeSource time) {
        this.time = Objects.requireNonNull(time, "time");
    }

    @Override
    public String name() {
        return "in-memory";
    }

    @Override
    public CompletionStage<Optional<FlightResult>> read(LockKey key, Duration timeout) {
        synchronized (this) {
            return CompletableFuture.completedFuture(retained(entries.get(key)));
        }
    }

    @Override
    public CompletionStage<FlightStart> begin(LockKey key, long fence, Duration timeout) {
        synchronized (this) {
            Entry e = entries.get(key);
            Optional<FlightResult> kept = retained(e);
            if (kept.isPresent()) {
                return CompletableFuture.completedFuture(new FlightStart.Retained(kept.get()));
            }
            if (e != null && e.flightFence() > fence) {
                return CompletableFuture.completedFuture(new FlightStart.Superseded(e.flightFence()));
            }
            entries.put(key, new Entry(fence, null, null));
            return CompletableFuture.completedFuture(new FlightStart.Started());
        }
    }

    @Override
    public CompletionStage<WriteOutcome> publish(LockKey key, long fence, byte[] result, Duration retention, Duration timeout) {
        String resource = "flight " + key.value();
        synchronized (this) {
            Entry e = entries.get(key);
            if (e != null && e.flightFence() > fence) {
                return CompletableFuture.completedFuture(new WriteOutcome.Stale(resource, fence, e.flightFence(),
                        FencePolicy.SAME_OR_NEWER));
            }
            entries.put(key, new Entry(fence, new FlightResult(fence, result.clone()), time.now().plus(retention)));
        }
        watchers.tell(key.value());
        return CompletableFuture.completedFuture(new WriteOutcome.Applied(resource, fence));
    }

    @Override
    public CompletionStage<Void> wake(LockKey key, Duration timeout) {
        watchers.tell(key.value());
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<FlightWatch> watch(LockKey key, Runnable onChange) {
        Objects.requireNonNull(onChange, "onChange");
        FlightWatch w = watchers.add(key.value(), onChange);
        return CompletableFuture.completedFuture(w);
    }

    /** How many watches are open on {@code key} (for tests: a finished flight leaves none). */
    public int watchers(LockKey key) {
        return watchers.count(key.value());
    }

    private Optional<FlightResult> retained(Entry e) {
        return e != null && e.result() != null && time.now().isBefore(e.expiresAt()) ? Optional.of(e.result()) : Optional.empty();
    }

    @Override
    public String toString() {
        return "InMemoryFlightStore";
    }
}
