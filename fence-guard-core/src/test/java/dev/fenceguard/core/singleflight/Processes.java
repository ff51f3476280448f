package dev.fenceguard.core.singleflight;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.ManualClock;
import dev.fenceguard.core.memory.FreezableLink;
import dev.fenceguard.core.memory.InMemoryFlightStore;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.spi.FlightStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Processes as separate JVMs would be: each with its own lock client, its own {@link Singleflight} and
 * its own link to one shared in-memory lock backend, all sharing one in-memory flight store, on one
 * manual clock. A process's lock link can be frozen (a paused process): its calls answer only on thaw.
 * Every store call is counted, and every publish recorded with its outcome.
 */
final class Processes {

    final ManualClock time = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    final InMemoryLockBackend locks = new InMemoryLockBackend(time);
    final InMemoryFlightStore memory = new InMemoryFlightStore(time);
    final CountingStore store = new CountingStore(memory);
    final List<Process> all = new ArrayList<>();

    Processes(int n, java.util.function.UnaryOperator<Singleflight.Builder> settings) {
        for (int i = 0; i < n; i++) {
            all.add(new Process(i, settings));
        }
    }

    Process get(int i) {
        return all.get(i);
    }

    /** Advances the clock in 100 ms steps, so the tasks due meanwhile run at their own times. */
    void advance(Duration by) {
        for (long ms = by.toMillis(); ms > 0; ms -= 100) {
            time.advance(Duration.ofMillis(Math.min(100, ms)));
        }
    }

    final class Process {
        final int id;
        final FreezableLink link = new FreezableLink(locks);
        final LockClient client;
        final Singleflight flights;
        final CountingMetrics metrics = new CountingMetrics();

        Process(int id, java.util.function.UnaryOperator<Singleflight.Builder> settings) {
            this.id = id;
            this.client = LockClient.builder(link).withTimeSource(time).withMetrics(LockMetrics.none())
                    .withCallTimeout(Duration.ofSeconds(5)).withReleaseTimeout(Duration.ofSeconds(5)).build();
            this.flights = settings.apply(Singleflight.builder(client, store).withTimeSource(time).withMetrics(metrics)).build();
        }
    }

    /** Counts what a Singleflight reports. */
    static class CountingMetrics implements SingleflightMetrics {
        final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

        int get(String what) {
            AtomicInteger n = counts.get(what);
            return n == null ? 0 : n.get();
        }

        private void add(String what) {
            counts.computeIfAbsent(what, k -> new AtomicInteger()).incrementAndGet();
        }

        @Override
        public void shared(String store) {
            add("shared");
        }

        @Override
        public void led(String store, LedOutcome outcome) {
            add("led " + outcome);
        }

        @Override
        public void waited(String store, WaitOutcome outcome, Duration waited) {
            add("waited " + outcome);
        }

        @Override
        public void retained(String store) {
            add("retained");
        }
    }

    /** A store that counts its calls and records every publish. */
    static final class CountingStore implements FlightStore {
        final FlightStore inner;
        final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        /** "fence applied" or "fence stale", in order. */
        final List<String> publishes = new CopyOnWriteArrayList<>();
        /** "fence begun", "fence applied" and "fence stale", in order. */
        final List<String> events = new CopyOnWriteArrayList<>();

        CountingStore(FlightStore inner) {
            this.inner = inner;
        }

        int calls(String op) {
            AtomicInteger n = calls.get(op);
            return n == null ? 0 : n.get();
        }

        int total() {
            return calls.values().stream().mapToInt(AtomicInteger::get).sum();
        }

        private void count(String op) {
            calls.computeIfAbsent(op, k -> new AtomicInteger()).incrementAndGet();
        }

        @Override
        public String name() {
            return inner.name();
        }

        @Override
        public CompletionStage<Optional<FlightResult>> read(LockKey key, Duration timeout) {
            count("read");
            return inner.read(key, timeout);
        }

        @Override
        public CompletionStage<FlightStart> begin(LockKey key, long fence, Duration timeout) {
            count("begin");
            return inner.begin(key, fence, timeout).thenApply(s -> {
                if (s instanceof FlightStart.Started) {
                    events.add(fence + " begun");
                }
                return s;
            });
        }

        @Override
        public CompletionStage<WriteOutcome> publish(LockKey key, long fence, byte[] result, Duration retention, Duration timeout) {
            count("publish");
            return inner.publish(key, fence, result, retention, timeout).thenApply(o -> {
                publishes.add(fence + (o.isApplied() ? " applied" : " stale"));
                events.add(fence + (o.isApplied() ? " applied" : " stale"));
                return o;
            });
        }

        @Override
        public CompletionStage<Void> wake(LockKey key, Duration timeout) {
            count("wake");
            return inner.wake(key, timeout);
        }

        @Override
        public CompletionStage<FlightWatch> watch(LockKey key, Runnable onChange) {
            count("watch");
            return inner.watch(key, onChange);
        }
    }
}
