import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jdbc.internal.BoundedJdbc;
import dev.fenceguard.jdbc.internal.MySqlErrors;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.jooq.FencedWriter;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.TestMariaDb;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * Issue #31 probe: where MariaDB's fenced upsert and lock pair spend their time, one part at a time, in one run.
 * Every row runs on the same kind of pool (HikariCP, one connection per thread) and threads; rows of a group are
 * measured in alternating rounds and reported as the median round, with min..max, and as a ratio to the group's
 * baseline, with the process's CPU per operation. Then each row runs 500 times on a pool of one connection whose
 * session counters ({@code Questions}, {@code Com_%}) give the statements per operation.
 *
 * <p>System properties: {@code probe.interleaved=true} runs each group interleaved instead (every thread runs the rows
 * in turn, the order rotating; mean latency per row), {@code probe.unchanged=true} makes every upsert leave its row as
 * it was, {@code probe.group=upserts|locks} runs one group, {@code probe.profile=upsert:5} runs one row alone (for
 * JFR). fence-guard's statements are captured from its own calls through a recording {@code DataSource} proxy.
 *
 * <p>Run from the repository root after {@code -pl benchmarks -am package dependency:build-classpath
 * -Dmdep.outputFile=cp.txt}:
 * {@code java -cp benchmarks/target/classes:$(cat benchmarks/cp.txt) benchmarks/probes/issue31/MariaDbCost.java [seconds] [threads] [rounds]}
 */
public class MariaDbCost {

    interface Op {
        void run(int thread, long i) throws Exception;
    }

    record Row(String name, Function<DataSource, Op> op) {}

    static String s;
    static final boolean UNCHANGED = Boolean.getBoolean("probe.unchanged");
    static final Duration TTL = Duration.ofSeconds(30);
    static final AtomicLong MARK = new AtomicLong(1L << 60);

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        TestMariaDb server = TestMariaDb.server();
        try (TestMariaDb.Database db = server.newDatabase("probe31"); HikariDataSource pool = pool(db.dataSource(), threads);
                HikariDataSource one = pool(db.dataSource(), 1)) {
            s = db.name();
            System.out.printf(Locale.ROOT, "MariaDB %s, %d threads, %.1f s per phase, %d rounds; uptime: %s%n%n", server.version(), threads,
                    seconds, rounds, uptime());
            try {
                run(db.dataSource(), pool, one, threads, seconds, rounds);
            } catch (Throwable e) {
                e.printStackTrace(System.out); // the source launcher trims the trace of what main throws
                System.exit(1);
            }
            System.out.println("uptime at end: " + uptime());
        }
    }

    static void run(DataSource raw, HikariDataSource pool, HikariDataSource one, int threads, double seconds, int rounds) throws Exception {
        exec(pool, "CREATE TABLE " + s + ".baseline (id BIGINT PRIMARY KEY, v BIGINT NOT NULL)");
        exec(pool, "INSERT INTO " + s + ".baseline SELECT seq, 0 FROM seq_1_to_1000");
        exec(pool, "CREATE TABLE " + s + ".orders (id BIGINT PRIMARY KEY, status VARCHAR(20) NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)");
        exec(pool, "INSERT INTO " + s + ".orders SELECT seq, 'new', 0 FROM seq_1_to_1000");
        FenceGuardMigrations.builder(pool).withSchema(s).withTable("locks").migrate();

        // What fence-guard prepares, captured from its own calls.
        List<String> upsertSql = new ArrayList<>();
        List<Map<Integer, Object>> upsertBinds = new ArrayList<>();
        FencedTable table = FencedTable.builder(s, "orders", "id", "fence_token").withKeyType(Long.class).build();
        table.on(capturing(pool, upsertSql, upsertBinds)).upsert(500L, FenceToken.of(7), Assignments.of("status", "x"));
        String fencedUpsert = upsertSql.getLast();
        Map<Integer, Object> upsertBind = upsertBinds.getLast();
        System.out.println("fenced upsert: " + fencedUpsert + "\n  binds " + upsertBind);
        List<String> lockSql = lockStatements(pool, "locks", FenceStrategy.DENSE);
        String acquireSql = withoutPrefix(lockSql.get(0));
        String releaseSql = withoutPrefix(lockSql.get(1));
        String prefixShape = lockSql.get(1).replaceFirst("(?is)^(SET STATEMENT .*? FOR ).*", "$1");
        System.out.println("lock prefix: " + prefixShape + "\nacquire: " + acquireSql + "\nrelease: " + releaseSql + "\n");
        // The same statements from a CLOCK_FLOORED backend, on a table of its own (a table has one strategy): no floor-row
        // read, the clock floor instead.
        FenceGuardMigrations.builder(pool).withSchema(s).withTable("locks_cf").migrate();
        List<String> flooredSql = lockStatements(pool, "locks_cf", FenceStrategy.CLOCK_FLOORED);
        String flooredAcquire = withoutPrefix(flooredSql.get(0));
        String flooredRelease = withoutPrefix(flooredSql.get(1));
        System.out.println("CLOCK_FLOORED acquire: " + flooredAcquire + "\n");
        // Cost rows only (not correct locks): the first fence without DENSE's locking read of the floor row, and then the
        // acquire without RETURNING (its outcome would have to be read some other way).
        String noFloorRead = acquireSql.replaceFirst("COALESCE\\(\\(SELECT fence_floor .*? LOCK IN SHARE MODE\\) \\+ 1, 1\\)", "1");
        String noReturning = noFloorRead.replaceFirst(" RETURNING .*$", "");
        if (noFloorRead.equals(acquireSql) || noReturning.equals(noFloorRead)) {
            throw new IllegalStateException("the acquire statement changed shape: " + acquireSql);
        }
        // A variant that is a correct lock: the outcome in one column (the fence if granted, minus the next fence if
        // exhausted, 0 if held) beside the expiry, where fence-guard's acquire returns five columns.
        String twoColumns = acquireSql.replaceFirst(" RETURNING .*$", " RETURNING CASE WHEN lock_id = ? AND acquired_at >= NOW(6) "
                + "THEN fence WHEN (lock_id IS NULL OR expires_at <= SYSDATE(6)) AND fence + 1 > " + FenceToken.MAX_VALUE
                + " THEN -(fence + 1) ELSE 0 END, expires_at");
        String prefix = "SET STATEMENT max_statement_time=9.999, innodb_lock_wait_timeout=10, time_zone='+00:00' FOR ";

        String plainUpsert = "INSERT INTO " + s + ".orders (status, id, fence_token) VALUES (?, ?, 7) "
                + "ON DUPLICATE KEY UPDATE status = VALUES(status), fence_token = VALUES(fence_token)";
        String guardedUpsert = "INSERT INTO " + s + ".orders (status, id, fence_token) VALUES (?, ?, 7) "
                + "ON DUPLICATE KEY UPDATE status = IF(fence_token <= 7, VALUES(status), status), "
                + "fence_token = IF(fence_token <= 7, VALUES(fence_token), fence_token)";
        List<Row> upserts = List.of(
                new Row("plain INSERT .. ON DUPLICATE KEY UPDATE (baseline)", ds -> (t, i) -> upsert(ds, plainUpsert, t, i, false)),
                new Row("  same + RETURN_GENERATED_KEYS", ds -> (t, i) -> upsert(ds, plainUpsert, t, i, true)),
                new Row("  guarded by IF() per column, no LAST_INSERT_ID", ds -> (t, i) -> upsert(ds, guardedUpsert, t, i, false)),
                new Row("fence-guard's upsert SQL by hand, no generated keys", ds -> (t, i) -> fenced(ds, fencedUpsert, upsertBind, t, i, false)),
                new Row("fence-guard's upsert SQL by hand, RETURN_GENERATED_KEYS", ds -> (t, i) -> fenced(ds, fencedUpsert, upsertBind, t, i, true)),
                new Row("FencedWriter.upsert", ds -> {
                    FencedWriter w = table.on(ds);
                    return (t, i) -> {
                        if (!w.upsert(key(t, i), FenceToken.of(7), Assignments.of("status", status(i))).isApplied()) {
                            throw new IllegalStateException("not applied");
                        }
                    };
                }));
        String bump = "UPDATE " + s + ".baseline SET v = v + 1 WHERE id = ?";
        List<Row> locks = List.of(
                new Row("2 x UPDATE .. WHERE pk = ? (baseline)", ds -> (t, i) -> {
                    bump(ds, bump, key(t, i));
                    bump(ds, bump, key(t, i));
                }),
                new Row("  2 x UPDATE, each behind SET STATEMENT", ds -> (t, i) -> {
                    bump(ds, prefix + bump, key(t, i));
                    bump(ds, prefix + bump, key(t, i));
                }),
                new Row("  2 x UPDATE, each on BoundedJdbc (virtual thread + timer)", ds -> {
                    BoundedJdbc calls = new BoundedJdbc(ds, BoundedJdbc.VIRTUAL_THREADS, MySqlErrors.naming(""));
                    return (t, i) -> {
                        for (int n = 0; n < 2; n++) {
                            calls.submit("k", "bump", Duration.ofSeconds(10), (c, left) -> {
                                try (PreparedStatement ps = c.prepareStatement(bump)) {
                                    ps.setLong(1, key(t, i));
                                    return ps.executeUpdate();
                                }
                            }).join();
                        }
                    };
                }),
                new Row("  2 x UPDATE, each on BoundedJdbc on the caller's thread (timer only)", ds -> {
                    BoundedJdbc calls = new BoundedJdbc(ds, Runnable::run, MySqlErrors.naming(""));
                    return (t, i) -> {
                        for (int n = 0; n < 2; n++) {
                            calls.submit("k", "bump", Duration.ofSeconds(10), (c, left) -> {
                                try (PreparedStatement ps = c.prepareStatement(bump)) {
                                    ps.setLong(1, key(t, i));
                                    return ps.executeUpdate();
                                }
                            }).join();
                        }
                    };
                }),
                new Row("acquire + release SQL by hand, no prefix", ds -> (t, i) -> pair(ds, "", acquireSql, releaseSql, t, i)),
                new Row("acquire + release SQL by hand, SET STATEMENT prefix", ds -> (t, i) -> pair(ds, prefix, acquireSql, releaseSql, t, i)),
                new Row("  by hand, no prefix, RETURNING two columns", ds -> (t, i) -> pair(ds, "", twoColumns, releaseSql, t, i)),
                new Row("  by hand, no prefix, without DENSE's floor-row read", ds -> (t, i) -> pair(ds, "", noFloorRead, releaseSql, t, i)),
                new Row("  by hand, no prefix, without the floor read or RETURNING", ds -> (t, i) -> pair(ds, "", noReturning, releaseSql, t, i)),
                new Row("MariaDbLockBackend acquire + release", ds -> {
                    BlockingBackend b = new BlockingBackend(FenceGuardJdbc.builder(ds).withSchema(s).withLockTable("locks").build()
                            .lockBackend(), Duration.ofSeconds(10));
                    return (t, i) -> {
                        LockKey k = LockKey.of("bench:" + key(t, i));
                        LockId id = LockId.random();
                        b.tryAcquire(k, id, TTL).orElseThrow();
                        if (!b.release(k, id)) {
                            throw new IllegalStateException("release failed");
                        }
                    };
                }),
                new Row("LockClient tryAcquire + release", ds -> clientPair(ds, "locks", FenceStrategy.DENSE)),
                new Row("CLOCK_FLOORED: acquire + release SQL by hand, SET STATEMENT prefix",
                        ds -> (t, i) -> pair(ds, prefix, flooredAcquire, flooredRelease, t, i)),
                new Row("CLOCK_FLOORED: LockClient tryAcquire + release", ds -> clientPair(ds, "locks_cf", FenceStrategy.CLOCK_FLOORED)),
                new Row("MariaDbLockBackend, withExecutor(4 platform threads)", ds -> {
                    java.util.concurrent.ExecutorService platform = java.util.concurrent.Executors.newFixedThreadPool(4, r -> {
                        Thread th = new Thread(r);
                        th.setDaemon(true);
                        return th;
                    });
                    BlockingBackend b = new BlockingBackend(FenceGuardJdbc.builder(ds).withSchema(s).withLockTable("locks")
                            .withExecutor(platform).build().lockBackend(), Duration.ofSeconds(10));
                    return (t, i) -> {
                        LockKey k = LockKey.of("bench:" + key(t, i));
                        LockId id = LockId.random();
                        b.tryAcquire(k, id, TTL).orElseThrow();
                        if (!b.release(k, id)) {
                            throw new IllegalStateException("release failed");
                        }
                    };
                }));
        String only = System.getProperty("probe.profile");
        if (only != null) { // one row alone, for a profiler: probe.profile=upsert:5 runs upserts row 5
            String[] g = only.split(":");
            Op op = (g[0].equals("upsert") ? upserts : locks).get(Integer.parseInt(g[1])).op().apply(pool);
            System.out.printf(Locale.ROOT, "%s alone: %.0f ops/s%n", only, measure(op, threads, seconds)[0]);
            return;
        }
        if (Boolean.getBoolean("probe.interleaved")) {
            for (int r = 0; r < rounds; r++) {
                if (!"locks".equals(System.getProperty("probe.group"))) {
                    interleaved("fenced upsert, round " + (r + 1), upserts, pool, threads, seconds);
                }
                if (!"upserts".equals(System.getProperty("probe.group"))) {
                    interleaved("lock pair, round " + (r + 1), locks, pool, threads, seconds);
                }
            }
            return;
        }
        if (!"locks".equals(System.getProperty("probe.group"))) {
            group("fenced upsert", upserts, pool, one, threads, seconds, rounds);
        }
        if (!"upserts".equals(System.getProperty("probe.group"))) {
            group("lock pair", locks, pool, one, threads, seconds, rounds);
        }
    }

    /** A status that differs from the one the key's previous visit (250 iterations earlier) wrote: every write changes the row. */
    static String status(long i) {
        if (UNCHANGED) {
            return "same"; // -Dprobe.unchanged=true: after the first visit every write leaves its row as it was
        }
        return "u" + ((i / 250) % 2);
    }

    static long key(int t, long i) {
        return 1 + t * 250L + (i % 250);
    }

    static void group(String name, List<Row> rows, HikariDataSource pool, HikariDataSource one, int threads, double seconds, int rounds)
            throws Exception {
        List<Op> ops = rows.stream().map(r -> r.op().apply(pool)).toList();
        for (Op op : ops) {
            measure(op, threads, seconds / 2); // warm-up
        }
        double[][] rates = new double[rows.size()][rounds];
        double[][] cpus = new double[rows.size()][rounds];
        for (int r = 0; r < rounds; r++) {
            for (int o = 0; o < ops.size(); o++) {
                double[] m = measure(ops.get(o), threads, seconds);
                rates[o][r] = m[0];
                cpus[o][r] = m[1];
            }
        }
        System.out.println("== " + name + " (ops/s: median [min..max] of " + rounds + " rounds; ratio of medians; statements per op) ==");
        double base = median(rates[0]);
        for (int o = 0; o < rows.size(); o++) {
            double[] sorted = rates[o].clone();
            Arrays.sort(sorted);
            Map<String, Double> stmts = counted(rows.get(o).op().apply(one), one, 500);
            System.out.printf(Locale.ROOT, "%-62s %8.0f [%6.0f..%6.0f] %5.2fx  client CPU %5.1f us/op  %s%n", rows.get(o).name(),
                    median(rates[o]), sorted[0], sorted[sorted.length - 1], median(rates[o]) / base, median(cpus[o]), stmts);
        }
        System.out.println();
    }

    /**
     * Every thread runs the rows in turn, one operation each, over and over, for {@code seconds}: load that
     * comes and goes falls on every row alike. Reports each row's mean latency and the baseline's mean over it
     * (at the same concurrency, the throughput ratio).
     */
    static void interleaved(String name, List<Row> rows, HikariDataSource pool, int threads, double seconds) throws Exception {
        List<Op> ops = rows.stream().map(r -> r.op().apply(pool)).toList();
        int n = ops.size();
        LongAdder[] nanos = new LongAdder[n];
        LongAdder[] counts = new LongAdder[n];
        for (int o = 0; o < n; o++) {
            nanos[o] = new LongAdder();
            counts[o] = new LongAdder();
        }
        for (boolean warm : new boolean[] {true, false}) {
            AtomicBoolean stop = new AtomicBoolean();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> workers = new ArrayList<>();
            Exception[] failure = new Exception[1];
            for (int t = 0; t < threads; t++) {
                int thread = t;
                workers.add(Thread.ofPlatform().start(() -> {
                    try {
                        start.await();
                        for (long i = 0; !stop.get(); i++) {
                            for (int step = 0; step < n; step++) {
                                int o = (int) ((step + i + thread) % n); // the order rotates: no row always follows the same one
                                long t0 = System.nanoTime();
                                ops.get(o).run(thread, i * n + o); // each row's write changes its row (status flips per visit)
                                if (!warm) {
                                    nanos[o].add(System.nanoTime() - t0);
                                    counts[o].increment();
                                }
                            }
                        }
                    } catch (Exception e) {
                        failure[0] = e;
                        stop.set(true);
                    }
                }));
            }
            start.countDown();
            Thread.sleep((long) (seconds * (warm ? 250 : 1000)));
            stop.set(true);
            for (Thread w : workers) {
                w.join();
            }
            if (failure[0] != null) {
                throw failure[0];
            }
        }
        System.out.println("== " + name + ", interleaved (mean latency per op; baseline's mean over the row's) ==");
        double base = nanos[0].sum() / (double) counts[0].sum();
        for (int o = 0; o < n; o++) {
            double mean = nanos[o].sum() / (double) counts[o].sum();
            System.out.printf(Locale.ROOT, "%-62s %7.0f us  %5.2fx  (%d ops)%n", rows.get(o).name(), mean / 1000, base / mean, counts[o].sum());
        }
        System.out.println();
    }

    static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }

    /** Session counter deltas per operation on the pool's one connection (the counters' own SHOW subtracted). */
    static Map<String, Double> counted(Op op, HikariDataSource one, int n) throws Exception {
        for (int i = 0; i < 50; i++) {
            op.run(0, i);
        }
        Map<String, Long> before = status(one);
        Map<String, Long> between = status(one);
        for (int i = 0; i < n; i++) {
            op.run(0, i);
        }
        Map<String, Long> after = status(one);
        Map<String, Double> per = new TreeMap<>();
        for (var e : after.entrySet()) {
            long own = between.getOrDefault(e.getKey(), 0L) - before.getOrDefault(e.getKey(), 0L);
            long d = e.getValue() - between.getOrDefault(e.getKey(), 0L) - own;
            if (d != 0) {
                per.put(e.getKey(), Math.round(d * 100.0 / n) / 100.0);
            }
        }
        return per;
    }

    static Map<String, Long> status(HikariDataSource one) throws Exception {
        Map<String, Long> m = new LinkedHashMap<>();
        try (Connection c = one.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SHOW SESSION STATUS WHERE Variable_name = 'Questions' OR Variable_name LIKE 'Com\\_%'")) {
            while (rs.next()) {
                m.put(rs.getString(1), rs.getLong(2));
            }
        }
        return m;
    }

    static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();

    /** Ops/s and the process's CPU microseconds per op over one phase. */
    static double[] measure(Op op, int threads, double seconds) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder count = new LongAdder();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        Exception[] failure = new Exception[1];
        for (int t = 0; t < threads; t++) {
            int thread = t;
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    for (long i = 0; !stop.get(); i++) {
                        op.run(thread, i);
                        count.increment();
                    }
                } catch (Exception e) {
                    failure[0] = e;
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
        if (failure[0] != null) {
            throw failure[0];
        }
        return new double[] {count.sum() / ((System.nanoTime() - t0) / 1e9), (OS.getProcessCpuTime() - cpu0) / 1000.0 / count.sum()};
    }

    static void upsert(DataSource ds, String sql, int t, long i, boolean keys) throws Exception {
        try (Connection c = ds.getConnection();
                PreparedStatement ps = keys ? c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS) : c.prepareStatement(sql)) {
            ps.setString(1, status(i));
            ps.setLong(2, key(t, i));
            ps.executeUpdate();
            if (keys) {
                try (ResultSet rs = ps.getGeneratedKeys()) {
                    rs.next();
                }
            }
        }
    }

    /** fence-guard's upsert statement with its captured binds: the key, the status and the mark replaced per call. */
    static void fenced(DataSource ds, String sql, Map<Integer, Object> binds, int t, long i, boolean keys) throws Exception {
        long mark = MARK.incrementAndGet();
        try (Connection c = ds.getConnection();
                PreparedStatement ps = keys ? c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS) : c.prepareStatement(sql)) {
            for (var e : binds.entrySet()) {
                Object v = e.getValue();
                if (v instanceof String) {
                    v = status(i);
                } else if (v instanceof Long l && l == 500L) {
                    v = key(t, i);
                } else if (v instanceof Long l && l >= (1L << 60)) {
                    v = mark;
                }
                ps.setObject(e.getKey(), v);
            }
            int rows = ps.executeUpdate();
            if (keys) {
                try (ResultSet rs = ps.getGeneratedKeys()) {
                    if (rows == 2 && (!rs.next() || rs.getLong(1) != mark)) {
                        throw new IllegalStateException("no mark");
                    }
                }
            }
        }
    }

    static void bump(DataSource ds, String sql, long id) throws Exception {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setLong(1, id);
            ps.executeUpdate();
        }
    }

    /** The acquire and the release statements (with their {@code SET STATEMENT} prefix) a backend on {@code table} sends. */
    static List<String> lockStatements(DataSource pool, String table, FenceStrategy strategy) throws Exception {
        List<String> sql = new ArrayList<>();
        BlockingBackend capture = new BlockingBackend(FenceGuardJdbc.builder(capturing(pool, sql, new ArrayList<>())).withSchema(s)
                .withLockTable(table).withFenceStrategy(strategy).build().lockBackend(), Duration.ofSeconds(10));
        LockId id = LockId.random();
        capture.tryAcquire(LockKey.of("probe"), id, TTL).orElseThrow();
        capture.release(LockKey.of("probe"), id);
        return sql.subList(sql.size() - 2, sql.size());
    }

    static String withoutPrefix(String sql) {
        return sql.replaceFirst("(?is)^SET STATEMENT .*? FOR ", "");
    }

    /** {@code LockClient}'s pair on {@code table}, as users make it: the blocking face lends its own thread to the call. */
    static Op clientPair(DataSource ds, String table, FenceStrategy strategy) {
        LockClient client = LockClient.of(FenceGuardJdbc.builder(ds).withSchema(s).withLockTable(table).withFenceStrategy(strategy).build()
                .lockBackend());
        return (t, i) -> {
            Lease lease = client.tryAcquire("bench:" + key(t, i), TTL).orElseThrow();
            if (!client.release(lease)) {
                throw new IllegalStateException("release failed");
            }
        };
    }

    static void pair(DataSource ds, String prefix, String acquire, String release, int t, long i) throws Exception {
        byte[] key = ("bench:" + key(t, i)).getBytes(StandardCharsets.UTF_8);
        String id = LockId.random().value();
        long micros = TTL.toNanos() / 1000;
        try (Connection c = ds.getConnection()) {
            try (PreparedStatement ps = c.prepareStatement(prefix + acquire)) {
                ps.setBytes(1, key);
                ps.setString(2, id);
                ps.setLong(3, micros);
                ps.setLong(4, micros);
                ps.setString(5, id);
                if (ps.execute()) {
                    try (ResultSet rs = ps.getResultSet()) {
                        if (!rs.next() || rs.getLong(1) < 1) { // 1 (true) or the fence: granted
                            throw new IllegalStateException("not granted");
                        }
                    }
                } else if (ps.getUpdateCount() < 1) {
                    throw new IllegalStateException("not granted");
                }
            }
        }
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(prefix + release)) {
            ps.setBytes(1, key);
            ps.setString(2, id);
            if (ps.executeUpdate() != 1) {
                throw new IllegalStateException("not released");
            }
        }
    }

    /** {@code pool} with every prepared statement's SQL and binds recorded. */
    static DataSource capturing(DataSource pool, List<String> sql, List<Map<Integer, Object>> binds) {
        return (DataSource) Proxy.newProxyInstance(MariaDbCost.class.getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, a) -> {
            Object r = invoke(pool, m, a);
            if (m.getName().equals("getConnection")) {
                Connection c = (Connection) r;
                return Proxy.newProxyInstance(MariaDbCost.class.getClassLoader(), new Class<?>[] {Connection.class}, (p2, m2, a2) -> {
                    Object r2 = invoke(c, m2, a2);
                    if (m2.getName().equals("prepareStatement")) {
                        sql.add((String) a2[0]);
                        Map<Integer, Object> bound = new TreeMap<>();
                        binds.add(bound);
                        PreparedStatement ps = (PreparedStatement) r2;
                        InvocationHandler h = (p3, m3, a3) -> {
                            if (m3.getName().startsWith("set") && a3 != null && a3.length >= 2 && a3[0] instanceof Integer n) {
                                bound.put(n, a3[1]);
                            }
                            return invoke(ps, m3, a3);
                        };
                        return Proxy.newProxyInstance(MariaDbCost.class.getClassLoader(), new Class<?>[] {PreparedStatement.class}, h);
                    }
                    return r2;
                });
            }
            return r;
        });
    }

    static Object invoke(Object target, java.lang.reflect.Method m, Object[] a) throws Throwable {
        try {
            return m.invoke(target, a);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    static HikariDataSource pool(DataSource ds, int size) {
        HikariConfig config = new HikariConfig();
        config.setDataSource(ds);
        config.setMaximumPoolSize(size);
        return new HikariDataSource(config);
    }

    static void exec(DataSource pool, String sql) throws Exception {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    static String uptime() throws Exception {
        return new String(new ProcessBuilder("uptime").start().getInputStream().readAllBytes()).trim();
    }
}
