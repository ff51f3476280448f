package dev.fenceguard.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/**
 * A small throughput/latency harness for I/O-bound operations (where JMH's nanosecond machinery
 * buys nothing): T threads run an operation for a fixed time; A and B are measured in alternating
 * rounds on the same pool and threads, and compared by the ratio of their medians.
 */
final class Harness {

    /** One operation; {@code thread} and {@code iteration} let it pick its own keys. */
    interface Op {
        void run(int thread, long iteration) throws Exception;
    }

    /**
     * Throughput and latency of one timed phase, and the client CPU per operation: the process CPU time
     * over the phase (every thread of the JVM: GC, JIT, the drivers' I/O threads) over the operations.
     */
    record Phase(double opsPerSecond, long p50Micros, long p99Micros, double cpuMicrosPerOp) {}

    /**
     * The arguments most benchmarks share, {@code [seconds-per-phase] [threads] [rounds]}, each with the
     * benchmark's default when left out.
     */
    record Args(double seconds, int threads, int rounds) {
        static Args of(String[] args, double seconds, int threads, int rounds) {
            return new Args(args.length > 0 ? Double.parseDouble(args[0]) : seconds,
                    args.length > 1 ? Integer.parseInt(args[1]) : threads,
                    args.length > 2 ? Integer.parseInt(args[2]) : rounds);
        }
    }

    /** A pool of at most {@code size} connections of {@code dataSource}, the one kind every SQL benchmark runs on. */
    static HikariDataSource pool(DataSource dataSource, int size) {
        HikariConfig config = new HikariConfig();
        config.setDataSource(dataSource);
        config.setMaximumPoolSize(size);
        return new HikariDataSource(config);
    }

    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();

    private final int threads;
    private final double seconds;

    Harness(int threads, double seconds) {
        this.threads = threads;
        this.seconds = seconds;
    }

    Phase measure(Op op) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder count = new LongAdder();
        List<long[]> samples = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        Exception[] failure = new Exception[1];
        for (int t = 0; t < threads; t++) {
            int thread = t;
            long[] latencies = new long[2_000_000];
            samples.add(latencies);
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    long i = 0;
                    while (!stop.get()) {
                        long t0 = System.nanoTime();
                        op.run(thread, i);
                        if (i < latencies.length) {
                            latencies[(int) i] = System.nanoTime() - t0;
                        }
                        i++;
                        count.increment();
                    }
                    if (i < latencies.length) {
                        latencies[(int) i] = -1; // end marker
                    }
                } catch (Exception e) {
                    synchronized (failure) {
                        failure[0] = e;
                    }
                    stop.set(true);
                }
            }));
        }
        long cpu0 = OS.getProcessCpuTime();
        long t0 = System.nanoTime();
        start.countDown();
        Thread.sleep((long) (seconds * 1000));
        stop.set(true);
        for (Thread w : workers) {
            w.join();
        }
        double elapsed = (System.nanoTime() - t0) / 1e9;
        long cpu = OS.getProcessCpuTime() - cpu0;
        if (failure[0] != null) {
            throw failure[0];
        }
        long[] all = samples.stream().flatMapToLong(a -> Arrays.stream(a).takeWhile(v -> v > 0)).sorted().toArray();
        return new Phase(count.sum() / elapsed, all[all.length / 2] / 1000, all[(int) (all.length * 0.99)] / 1000,
                cpu / 1000.0 / count.sum());
    }

    /** Runs A and B alternately {@code rounds} times and returns the median phase of each. */
    Phase[] compare(int rounds, Op a, Op b) throws Exception {
        return compare(rounds, List.of(a, b)).stream().map(Harness::median).toArray(Phase[]::new);
    }

    /**
     * Runs every op once per round, in turn, {@code rounds} times; returns each op's phases, in the order
     * of {@code ops}, so that a caller can report every round and not only the median.
     */
    List<List<Phase>> compare(int rounds, List<Op> ops) throws Exception {
        List<List<Phase>> phases = new ArrayList<>();
        ops.forEach(op -> phases.add(new ArrayList<>()));
        for (int r = 0; r < rounds; r++) {
            for (int o = 0; o < ops.size(); o++) {
                phases.get(o).add(measure(ops.get(o)));
            }
        }
        return phases;
    }

    /** The phase of median throughput. */
    static Phase median(List<Phase> phases) {
        List<Phase> sorted = new ArrayList<>(phases);
        sorted.sort((x, y) -> Double.compare(x.opsPerSecond(), y.opsPerSecond()));
        return sorted.get(sorted.size() / 2);
    }
}
