package dev.fenceguard.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.testkit.servers.TestMariaDb;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
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
        return pool(dataSource, size, null);
    }

    /** {@link #pool(DataSource, int)} whose connections run {@code initSql} once when made (null: none). */
    static HikariDataSource pool(DataSource dataSource, int size, String initSql) {
        HikariConfig config = new HikariConfig();
        config.setDataSource(dataSource);
        config.setMaximumPoolSize(size);
        config.setConnectionInitSql(initSql);
        return new HikariDataSource(config);
    }

    /** What a SQL benchmark runs in its scratch namespace (a schema or a database), on a pool of one connection per thread. */
    interface SqlBench {
        void run(String namespace, HikariDataSource pool) throws Exception;
    }

    /**
     * The setup every SQL benchmark on the test PostgreSQL shares: a fresh schema named after {@code prefix},
     * a pool of {@code cli.threads()} on it, the header naming the server and the arguments, then
     * {@code bench}; the schema is dropped afterwards.
     */
    static void onPostgres(String prefix, Args cli, SqlBench bench) throws Exception {
        TestPostgres server = TestPostgres.server();
        try (TestPostgres.Schema schema = server.newSchema(prefix); HikariDataSource pool = pool(schema.dataSource(), cli.threads())) {
            header("PostgreSQL", server.version(), server.origin(), cli);
            bench.run(schema.name(), pool);
        }
    }

    /** As {@link #onPostgres}, in a fresh database on the test MariaDB. */
    static void onMariaDb(String prefix, Args cli, SqlBench bench) throws Exception {
        TestMariaDb server = TestMariaDb.server();
        try (TestMariaDb.Database db = server.newDatabase(prefix); HikariDataSource pool = pool(db.dataSource(), cli.threads())) {
            header("MariaDB", server.version(), server.origin(), cli);
            bench.run(db.name(), pool);
        }
    }

    private static void header(String server, String version, String origin, Args cli) {
        System.out.printf(Locale.ROOT, "%s %s (%s), %d threads, pool %d, %.1f s per phase, %d alternating rounds, median of rounds%n%n",
                server, version, origin, cli.threads(), cli.threads(), cli.seconds(), cli.rounds());
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
