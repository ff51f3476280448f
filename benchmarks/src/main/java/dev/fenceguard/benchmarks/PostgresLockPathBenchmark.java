package dev.fenceguard.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jdbc.internal.BoundStatements;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.lang.reflect.Field;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executor;

/**
 * Where fence-guard's PostgreSQL lock pair spends what the same fenced pair written by hand does not (issue #31):
 * a ladder of rows, each adding one thing fence-guard does to the row before it, from the pair by hand to
 * {@link LockClient}, all {@code CLOCK_FLOORED} (commits that do not wait for the WAL flush), each thread on keys
 * of its own, rows alternating in rounds on the same server and threads:
 * <ol>
 *   <li>the pair by hand, on a pool whose connections run {@code SET synchronous_commit = off} once;
 *   <li>the same statements with fence-guard's bound ({@code set_config} of the two timeouts and the commit
 *       setting) sent before each in the same round trip, on the plain pool;
 *   <li>fence-guard's own two statements (read from the backend, so they cannot drift), by hand on one connection;
 *   <li>the same, each statement on a connection of its own from the pool (as each backend call takes one);
 *   <li>fence-guard's {@link LockBackend} called directly, its calls run on the caller's thread;
 *   <li>the same backend on its default executor, a new virtual thread per call;
 *   <li>{@link LockClient} on the backend that runs calls on the caller's thread;
 *   <li>{@link LockClient} as users get it (the peers benchmark's {@code CLOCK_FLOORED} row).
 * </ol>
 * Each step's cost is its row against the one before, in the same round. Arguments:
 * {@code [seconds-per-phase=3] [rounds=3] [threads=1,8] [rows=all: a comma list of row numbers, 1-based]}.
 */
public final class PostgresLockPathBenchmark {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final int KEYS_PER_THREAD = 250;

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int[] threads = Arrays.stream((args.length > 2 ? args[2] : "1,8").split(",")).mapToInt(Integer::parseInt).toArray();
        String rows = args.length > 3 ? args[3] : "";
        TestPostgres server = TestPostgres.server();
        try (TestPostgres.Schema schema = server.newSchema("lockpath")) {
            int poolSize = Arrays.stream(threads).max().orElseThrow();
            try (HikariDataSource pool = Harness.pool(schema.dataSource(), poolSize);
                    HikariDataSource unflushed = Harness.pool(schema.dataSource(), poolSize, "SET synchronous_commit = off")) {
                String s = schema.name();
                System.out.printf(Locale.ROOT, "PostgreSQL %s (%s), HikariCP pools of %d, %.1f s per phase, %d rounds, %d cores%n",
                        server.version(), server.origin(), poolSize, seconds, rounds, Runtime.getRuntime().availableProcessors());
                schema.execute("CREATE TABLE " + s + ".hand (k TEXT PRIMARY KEY, fence BIGINT NOT NULL, owner UUID, until TIMESTAMPTZ)");
                schema.execute("CREATE TABLE " + s + ".hand_bound (k TEXT PRIMARY KEY, fence BIGINT NOT NULL, owner UUID, until TIMESTAMPTZ)");
                String grant = "INSERT INTO %s AS l (k, fence, owner, until) VALUES (?, 1, ?, clock_timestamp() + interval '30 seconds') "
                        + "ON CONFLICT (k) DO UPDATE SET fence = l.fence + 1, owner = EXCLUDED.owner, until = EXCLUDED.until "
                        + "WHERE l.owner IS NULL OR l.until <= clock_timestamp() RETURNING fence";
                String free = "UPDATE %s SET owner = NULL, until = NULL WHERE k = ? AND owner = ? AND until > clock_timestamp()";
                String handGrant = grant.formatted(s + ".hand");
                String handFree = free.formatted(s + ".hand");
                String boundGrant = BoundStatements.BOUND_UNFLUSHED + grant.formatted(s + ".hand_bound");
                String boundFree = BoundStatements.BOUND_UNFLUSHED + free.formatted(s + ".hand_bound");

                Map<String, LockBackend> backends = new LinkedHashMap<>();
                for (String name : List.of("direct", "caller", "virtual")) {
                    FenceGuardMigrations.builder(pool).withSchema(s).withTable("locks_" + name).migrate();
                    FenceGuardJdbc.Builder b = FenceGuardJdbc.builder(pool).withSchema(s).withLockTable("locks_" + name)
                            .withFenceStrategy(FenceStrategy.CLOCK_FLOORED);
                    if (!name.equals("virtual")) {
                        b.withExecutor(CALLERS_THREAD);
                    }
                    backends.put(name, b.build().lockBackend());
                }
                LockBackend direct = backends.get("direct");
                String fgAcquire = sql(direct, "acquireSql");
                String fgRelease = sql(direct, "releaseSql");
                LockBackend onCaller = backends.get("caller");
                LockBackend onVirtual = backends.get("virtual");
                FenceGuardMigrations.builder(pool).withSchema(s).withTable("locks_client_caller").migrate();
                FenceGuardMigrations.builder(pool).withSchema(s).withTable("locks_client").migrate();
                LockClient clientOnCaller = LockClient.of(FenceGuardJdbc.builder(pool).withSchema(s).withLockTable("locks_client_caller")
                        .withFenceStrategy(FenceStrategy.CLOCK_FLOORED).withExecutor(CALLERS_THREAD).build().lockBackend());
                LockClient client = LockClient.of(FenceGuardJdbc.builder(pool).withSchema(s).withLockTable("locks_client")
                        .withFenceStrategy(FenceStrategy.CLOCK_FLOORED).build().lockBackend());

                Map<String, Harness.Op> ladder = new LinkedHashMap<>();
                ladder.put("1 pair by hand, pool SET synchronous_commit off", (t, i) -> {
                    try (Connection c = unflushed.getConnection()) {
                        handPair(c, handGrant, handFree, key(t, i), false);
                    }
                });
                ladder.put("2 + bound (set_config x3) in each round trip", (t, i) -> {
                    try (Connection c = pool.getConnection()) {
                        handPair(c, boundGrant, boundFree, key(t, i), true);
                    }
                });
                ladder.put("3 fence-guard's statements by hand", (t, i) -> {
                    try (Connection c = pool.getConnection()) {
                        fencePair(c, c, fgAcquire, fgRelease, key(t, i));
                    }
                });
                ladder.put("4 + a pool connection per statement", (t, i) -> {
                    String key = key(t, i);
                    String id = LockId.random().value();
                    try (Connection c = pool.getConnection()) {
                        acquire(c, fgAcquire, key, id);
                    }
                    try (Connection c = pool.getConnection()) {
                        release(c, fgRelease, key, id);
                    }
                });
                ladder.put("5 LockBackend, caller's thread", (t, i) -> backendPair(onCaller, key(t, i)));
                ladder.put("6 LockBackend, virtual thread per call", (t, i) -> backendPair(onVirtual, key(t, i)));
                ladder.put("7 LockClient, caller's thread", (t, i) -> clientPair(clientOnCaller, key(t, i)));
                ladder.put("8 LockClient (as users get it)", (t, i) -> clientPair(client, key(t, i)));
                if (!rows.isEmpty()) {
                    List<String> keep = List.of(rows.split(","));
                    ladder.keySet().removeIf(name -> !keep.contains(name.substring(0, name.indexOf(' '))));
                }
                for (int n : threads) {
                    run(n, seconds, rounds, ladder);
                }
            }
        }
    }

    /** Runs each task on the thread that submits it: a backend call then blocks its caller, as JDBC does. */
    private static final Executor CALLERS_THREAD = new Executor() {
        @Override
        public void execute(Runnable task) {
            task.run();
        }

        @Override
        public String toString() {
            return "caller's thread";
        }
    };

    private static String key(int thread, long iteration) {
        return "k" + thread + ":" + (iteration % KEYS_PER_THREAD);
    }

    /** The backend's own statement text, so that rows 3 and 4 run exactly what it sends. */
    private static String sql(LockBackend backend, String field) throws ReflectiveOperationException {
        Field f = backend.getClass().getDeclaredField(field);
        f.setAccessible(true);
        return (String) f.get(backend);
    }

    private static void handPair(Connection c, String grantSql, String freeSql, String key, boolean bound) throws Exception {
        UUID owner = UUID.randomUUID();
        try (PreparedStatement grant = c.prepareStatement(grantSql); PreparedStatement free = c.prepareStatement(freeSql)) {
            int p = bound ? bind(grant) : 1;
            grant.setString(p, key);
            grant.setObject(p + 1, owner);
            if (bound) {
                grant.execute();
                grant.getMoreResults();
            }
            try (ResultSet rs = bound ? grant.getResultSet() : grant.executeQuery()) {
                if (!rs.next() || rs.getLong(1) < 1) {
                    throw new IllegalStateException("grant refused");
                }
            }
            p = bound ? bind(free) : 1;
            free.setString(p, key);
            free.setObject(p + 1, owner);
            int count;
            if (bound) {
                free.execute();
                free.getMoreResults();
                count = free.getUpdateCount();
            } else {
                count = free.executeUpdate();
            }
            if (count != 1) {
                throw new IllegalStateException("release refused");
            }
        }
    }

    /**
     * Sets the bound's two timeouts, as fence-guard does ({@link BoundStatements#prepare}, which prepares too);
     * returns the first parameter of the statement after it.
     */
    private static int bind(PreparedStatement ps) throws Exception {
        String millis = Integer.toString((int) TIMEOUT.toMillis());
        ps.setString(1, millis);
        ps.setString(2, millis);
        return 3;
    }

    private static void fencePair(Connection a, Connection r, String acquireSql, String releaseSql, String key) throws Exception {
        String id = LockId.random().value();
        acquire(a, acquireSql, key, id);
        release(r, releaseSql, key, id);
    }

    /** fence-guard's CLOCK_FLOORED acquisition: bound, then key, lock id, ttl twice; returns fence and expiry. */
    private static void acquire(Connection c, String sql, String key, String id) throws Exception {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps);
            ps.setString(3, key);
            ps.setString(4, id);
            ps.setLong(5, TTL.toMillis());
            ps.setLong(6, TTL.toMillis());
            ps.execute();
            ps.getMoreResults();
            try (ResultSet rs = ps.getResultSet()) {
                if (!rs.next() || rs.getLong(1) < 1 || rs.getObject(2, java.time.OffsetDateTime.class) == null) {
                    throw new IllegalStateException("grant refused");
                }
            }
        }
    }

    private static void release(Connection c, String sql, String key, String id) throws Exception {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps);
            ps.setString(3, key);
            ps.setString(4, id);
            ps.execute();
            ps.getMoreResults();
            if (ps.getUpdateCount() != 1) {
                throw new IllegalStateException("release refused");
            }
        }
    }

    private static void backendPair(LockBackend backend, String key) {
        LockKey lockKey = LockKey.of(key);
        LockId id = LockId.random();
        Optional<Grant> grant = backend.tryAcquire(lockKey, id, TTL, TIMEOUT).toCompletableFuture().join();
        if (grant.isEmpty() || !backend.release(lockKey, id, TIMEOUT).toCompletableFuture().join()) {
            throw new IllegalStateException("backend pair refused");
        }
    }

    private static void clientPair(LockClient client, String key) {
        if (!client.release(client.tryAcquire(key, TTL).orElseThrow(() -> new IllegalStateException("not acquired")))) {
            throw new IllegalStateException("release refused");
        }
    }

    private static void run(int threads, double seconds, int rounds, Map<String, Harness.Op> ladder) throws Exception {
        Harness h = new Harness(threads, seconds);
        List<Harness.Op> ops = new ArrayList<>(ladder.values());
        for (Harness.Op op : ops) {
            h.measure(op); // warm-up pass
        }
        List<List<Harness.Phase>> phases = h.compare(rounds, ops);
        List<String> names = new ArrayList<>(ladder.keySet());
        System.out.printf(Locale.ROOT, "%n%d thread(s): | row | pairs/s (median round) | rounds | vs row before, per round | vs row 1 | p50 us | CPU us/pair |%n", threads);
        Harness.Phase first = Harness.median(phases.getFirst());
        for (int p = 0; p < names.size(); p++) {
            Harness.Phase m = Harness.median(phases.get(p));
            List<String> perRound = new ArrayList<>();
            List<String> rates = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                rates.add(String.format(Locale.ROOT, "%,.0f", phases.get(p).get(r).opsPerSecond()));
                if (p > 0) {
                    perRound.add(String.format(Locale.ROOT, "%.2fx", phases.get(p).get(r).opsPerSecond() / phases.get(p - 1).get(r).opsPerSecond()));
                }
            }
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %s | %s | %.2fx | %d | %.1f |%n", names.get(p), m.opsPerSecond(),
                    String.join(" / ", rates), p == 0 ? "" : String.join(", ", perRound), m.opsPerSecond() / first.opsPerSecond(),
                    m.p50Micros(), m.cpuMicrosPerOp());
        }
    }
}
