package dev.fenceguard.benchmarks;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.micrometer.MicrometerLockMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The hidden cost of lock events (issue #28): lock pairs on the in-memory backend, where no I/O hides what
 * fence-guard itself spends per event, with Micrometer bound and without, measured in alternating rounds on
 * the same threads. A pair is a {@code tryAcquire} and a {@code close()} (events: acquire attempt, lease
 * started, held, lease ended); a {@code withLock} pair adds the renewal it starts and the observation of
 * the run. What the events cost is the gap between the two sides, in client CPU per pair.
 * Arguments: {@code [seconds-per-phase=5] [threads=2] [rounds=5]}.
 */
public final class EventsBenchmark {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final int KEYS = 1_000;

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        String[] keys = new String[KEYS * threads];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = "bench:" + i;
        }
        LockClient metered = LockClient.builder(new InMemoryLockBackend())
                .withMetrics(MicrometerLockMetrics.of(new SimpleMeterRegistry())).build();
        LockClient bare = LockClient.builder(new InMemoryLockBackend()).withMetrics(LockMetrics.none()).build();
        Harness h = new Harness(threads, seconds);
        Harness.Op pairMetered = pair(metered, keys);
        Harness.Op pairBare = pair(bare, keys);
        Harness.Op withLockMetered = withLock(metered, keys);
        Harness.Op withLockBare = withLock(bare, keys);
        List<Harness.Op> ops = List.of(pairMetered, pairBare, withLockMetered, withLockBare);
        for (Harness.Op op : ops) {
            h.measure(op); // warm-up: JIT and the meters' registration
        }
        System.out.printf(Locale.ROOT, "in-memory backend, %d threads, %.1f s per phase, %d alternating rounds, median of rounds%n%n",
                threads, seconds, rounds);
        List<List<Harness.Phase>> phases = h.compare(rounds, ops);
        report("tryAcquire + close", Harness.median(phases.get(0)), Harness.median(phases.get(1)));
        report("withLock", Harness.median(phases.get(2)), Harness.median(phases.get(3)));
        System.exit(0); // the client's timer thread
    }

    private static Harness.Op pair(LockClient client, String[] keys) {
        return (t, i) -> {
            Lease lease = client.tryAcquire(keys[(int) (t * KEYS + i % KEYS)], TTL).orElseThrow();
            lease.close();
        };
    }

    private static Harness.Op withLock(LockClient client, String[] keys) {
        return (t, i) -> client.withLock(keys[(int) (t * KEYS + i % KEYS)], TTL, Duration.ZERO, lease -> lease).orElseThrow();
    }

    private static void report(String name, Harness.Phase metered, Harness.Phase bare) {
        System.out.printf(Locale.ROOT, "%-20s Micrometer bound: %9.0f/s  %6.2f us CPU/pair   none: %9.0f/s  %6.2f us CPU/pair"
                        + "   throughput ratio %.2fx, CPU gap %+.2f us/pair%n",
                name, metered.opsPerSecond(), metered.cpuMicrosPerOp(), bare.opsPerSecond(), bare.cpuMicrosPerOp(),
                metered.opsPerSecond() / bare.opsPerSecond(), metered.cpuMicrosPerOp() - bare.cpuMicrosPerOp());
    }
}
