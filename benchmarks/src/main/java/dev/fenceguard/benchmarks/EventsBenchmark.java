package dev.fenceguard.benchmarks;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.micrometer.MicrometerLockMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.LongBinaryOperator;

/**
 * The hidden cost of lock events (issue #28): lock pairs on the in-memory backend, where no I/O hides what
 * fence-guard itself spends per event, with Micrometer bound and without, measured in alternating rounds on
 * the same threads. A pair is a {@code tryAcquire} and a {@code close()} (events: the grant and the release;
 * meters: acquire attempt, held now up, held time, held now down); a {@code withLock} adds the renewal it
 * starts and stops and its run. What the events cost is the gap between the two sides, in client CPU per pair.
 *
 * <p>With a fourth argument, the classes directory of another build of fence-guard-core (the baseline, e.g.
 * the commit before a change), the same four operations also run on that build, loaded in a class loader of
 * its own, in the same rounds: before/after in one run, on the same threads and the same load.
 * Arguments: {@code [seconds-per-phase=5] [threads=2] [rounds=5] [baseline core classes]}.
 */
public final class EventsBenchmark {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final int KEYS = 1_000;
    private static final String[] NAMES = {"tryAcquire + close, Micrometer bound", "tryAcquire + close, LockMetrics.none()",
            "withLock, Micrometer bound", "withLock, LockMetrics.none()"};

    public static void main(String[] args) throws Exception {
        Harness.Args cli = Harness.Args.of(args, 5, 2, 5);
        List<Harness.Op> ops = new ArrayList<>(wrap(ops(cli.threads())));
        if (args.length > 3) {
            ops.addAll(wrap(baselineOps(Path.of(args[3]), cli.threads())));
        }
        Harness h = new Harness(cli.threads(), cli.seconds());
        for (Harness.Op op : ops) {
            h.measure(op); // warm-up: JIT and the meters' registration
        }
        System.out.printf(Locale.ROOT, "in-memory backend, %d threads, %.1f s per phase, %d alternating rounds, median of rounds%s%n%n",
                cli.threads(), cli.seconds(), cli.rounds(), args.length > 3 ? "; baseline core: " + args[3] : "");
        List<List<Harness.Phase>> phases = h.compare(cli.rounds(), ops);
        for (int i = 0; i < ops.size(); i++) {
            Harness.Phase p = Harness.median(phases.get(i));
            System.out.printf(Locale.ROOT, "%-9s %-40s %9.0f pairs/s  %6.2f us CPU/pair%n", i < 4 ? "this" : "baseline",
                    NAMES[i % 4], p.opsPerSecond(), p.cpuMicrosPerOp());
        }
        for (int base = 0; base < ops.size(); base += 4) {
            for (int pair = 0; pair < 4; pair += 2) {
                Harness.Phase metered = Harness.median(phases.get(base + pair));
                Harness.Phase bare = Harness.median(phases.get(base + pair + 1));
                System.out.printf(Locale.ROOT, "%-9s %-20s Micrometer bound / none: throughput %.2fx, CPU gap %+.2f us/pair%n",
                        base == 0 ? "this" : "baseline", pair == 0 ? "tryAcquire + close" : "withLock",
                        metered.opsPerSecond() / bare.opsPerSecond(), metered.cpuMicrosPerOp() - bare.cpuMicrosPerOp());
            }
        }
        if (ops.size() > 4) {
            for (int i = 0; i < 4; i++) {
                Harness.Phase now = Harness.median(phases.get(i));
                Harness.Phase then = Harness.median(phases.get(i + 4));
                System.out.printf(Locale.ROOT, "this / baseline  %-40s throughput %.2fx, CPU per pair %.2fx%n", NAMES[i],
                        now.opsPerSecond() / then.opsPerSecond(), now.cpuMicrosPerOp() / then.cpuMicrosPerOp());
            }
        }
        System.exit(0); // the clients' timer threads
    }

    /**
     * The four operations, on this class loader's fence-guard-core, as JDK types so that a copy of this class
     * in another loader hands them over: (thread, iteration) to anything.
     */
    public static List<LongBinaryOperator> ops(int threads) {
        String[] keys = new String[KEYS * threads];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = "bench:" + i;
        }
        LockClient metered = LockClient.builder(new InMemoryLockBackend())
                .withMetrics(MicrometerLockMetrics.of(new SimpleMeterRegistry())).build();
        LockClient bare = LockClient.builder(new InMemoryLockBackend()).withMetrics(LockMetrics.none()).build();
        return List.of(pair(metered, keys), pair(bare, keys), withLock(metered, keys), withLock(bare, keys));
    }

    private static LongBinaryOperator pair(LockClient client, String[] keys) {
        return (t, i) -> {
            Lease lease = client.tryAcquire(keys[(int) (t * KEYS + i % KEYS)], TTL).orElseThrow();
            lease.close();
            return 0;
        };
    }

    private static LongBinaryOperator withLock(LockClient client, String[] keys) {
        return (t, i) -> {
            try {
                return client.withLock(keys[(int) (t * KEYS + i % KEYS)], TTL, Duration.ZERO, lease -> lease).orElseThrow()
                        .fence().value();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        };
    }

    private static List<Harness.Op> wrap(List<LongBinaryOperator> ops) {
        return ops.stream().map(op -> (Harness.Op) op::applyAsLong).toList();
    }

    /**
     * {@link #ops} on the baseline: this class and fence-guard-core's classes are loaded again, the core from
     * {@code coreClasses}; everything else (Micrometer, SLF4J, the JDK) is shared with this run.
     */
    @SuppressWarnings("unchecked")
    private static List<LongBinaryOperator> baselineOps(Path coreClasses, int threads) throws Exception {
        Path benchmarkClasses = Path.of(EventsBenchmark.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        ClassLoader loader = new ChildFirst(EventsBenchmark.class.getClassLoader(), coreClasses, benchmarkClasses);
        return (List<LongBinaryOperator>) loader.loadClass(EventsBenchmark.class.getName()).getMethod("ops", int.class)
                .invoke(null, threads);
    }

    /** Loads fence-guard-core and this class itself from the given directories, the rest from the parent. */
    private static final class ChildFirst extends ClassLoader {
        private final Path core;
        private final Path benchmarks;

        ChildFirst(ClassLoader parent, Path core, Path benchmarks) {
            super("baseline", parent);
            this.core = core;
            this.benchmarks = benchmarks;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    Path dir = name.startsWith("dev.fenceguard.core.") ? core
                            : name.startsWith(EventsBenchmark.class.getName()) ? benchmarks : null;
                    if (dir == null) {
                        return super.loadClass(name, resolve);
                    }
                    Path file = dir.resolve(name.replace('.', '/') + ".class");
                    if (!Files.exists(file)) {
                        throw new ClassNotFoundException(name + " (not in " + dir + ")");
                    }
                    try (InputStream in = Files.newInputStream(file)) {
                        byte[] bytes = in.readAllBytes();
                        c = defineClass(name, bytes, 0, bytes.length);
                    } catch (IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }
}
