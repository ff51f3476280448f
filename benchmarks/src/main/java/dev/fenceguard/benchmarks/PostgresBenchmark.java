package dev.fenceguard.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.jooq.FencedWriter;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.SQLDialect;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * PostgreSQL benchmarks of issue #3, each as a ratio against a baseline measured in the same run, on
 * the same pool and threads:
 * <ol>
 *   <li>acquire + release pairs/s vs two plain single-row {@code UPDATE .. WHERE pk = ?} (target >= 0.7x);</li>
 *   <li>fenced UPDATE vs the same jOOQ UPDATE without the fence predicate (target >= 0.9x), and vs a
 *       plain JDBC prepared UPDATE (reported);</li>
 *   <li>acquire latency with 1,000,000 vs 1,000 distinct keys in the lock table (target <= 1.25x).</li>
 * </ol>
 * Server: {@link TestPostgres#server()} (set FENCE_GUARD_TEST_POSTGRES_URL, or embedded PostgreSQL).
 * Arguments: {@code [seconds-per-phase=5] [threads=4] [rounds=3]}.
 */
public final class PostgresBenchmark {

    /** The bound of each backend call: LockClient's default call timeout. */
    private static final java.time.Duration CALL_TIMEOUT = java.time.Duration.ofSeconds(10);

    public static void main(String[] args) throws Exception {
        Harness.Args cli = Harness.Args.of(args, 5, 4, 3);
        Harness.onPostgres("bench", cli, (s, pool) -> run(s, pool, cli.seconds(), cli.threads(), cli.rounds()));
    }

    private static void run(String s, HikariDataSource pool, double seconds, int threads, int rounds) throws Exception {
        Harness h = new Harness(threads, seconds);
        exec(pool, "CREATE TABLE " + s + ".baseline (id BIGINT PRIMARY KEY, v BIGINT NOT NULL)");
        exec(pool, "INSERT INTO " + s + ".baseline SELECT g, 0 FROM generate_series(1, 1000) g");
        exec(pool, "CREATE TABLE " + s + ".orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)");
        exec(pool, "INSERT INTO " + s + ".orders SELECT g, 'new', 0 FROM generate_series(1, 1000) g");
        for (String t : new String[] {"locks_small", "locks_large"}) {
            FenceGuardMigrations.builder(pool).withSchema(s).withTable(t).migrate();
        }
        exec(pool, "INSERT INTO " + s + ".locks_small (lock_key, fence) SELECT 'bench:' || g, 1 FROM generate_series(1, 1000) g");
        exec(pool, "INSERT INTO " + s + ".locks_large (lock_key, fence) SELECT 'bench:' || g, 1 FROM generate_series(1, 1000000) g");
        exec(pool, "VACUUM ANALYZE " + s + ".locks_small");
        exec(pool, "VACUUM ANALYZE " + s + ".locks_large");

        // The harness's threads wait for each call, as LockClient's blocking face does; the calls themselves
        // run on the backend's default executor (a virtual thread per call) with a 10 s bound, as in production.
        BlockingBackend small = new BlockingBackend(FenceGuardJdbc.builder(pool).withSchema(s).withLockTable("locks_small").build().lockBackend(), CALL_TIMEOUT);
        BlockingBackend large = new BlockingBackend(FenceGuardJdbc.builder(pool).withSchema(s).withLockTable("locks_large").build().lockBackend(), CALL_TIMEOUT);
        java.time.Duration ttl = java.time.Duration.ofSeconds(30);

        // 1. acquire + release vs two single-row UPDATEs. Each thread owns its keys/rows: no contention.
        String baselineSql = "UPDATE " + s + ".baseline SET v = v + 1 WHERE id = ?";
        Harness.Op acquireRelease = (t, i) -> {
            LockKey key = LockKey.of("bench:" + (1 + t * 250 + (i % 250)));
            LockId id = LockId.random();
            small.tryAcquire(key, id, ttl).orElseThrow();
            if (!small.release(key, id)) {
                throw new IllegalStateException("release failed");
            }
        };
        Harness.Op twoUpdates = (t, i) -> {
            long id = 1 + t * 250 + (i % 250);
            update(pool, baselineSql, id);
            update(pool, baselineSql, id);
        };
        h.measure(acquireRelease); // warm-up
        h.measure(twoUpdates);
        Harness.Phase[] r1 = h.compare(rounds, acquireRelease, twoUpdates);
        report("acquire+release pairs/s", r1[0], "2 x UPDATE .. WHERE pk = ?", r1[1], ">= 0.7x", r1[0].opsPerSecond() / r1[1].opsPerSecond() >= 0.7);

        // 2. fenced UPDATE vs the same UPDATE without the fence predicate.
        FencedWriter fenced = FencedTable.builder(s, "orders", "id", "fence_token").withKeyType(Long.class).build().on(pool);
        DSLContext dsl = DSL.using(pool, SQLDialect.POSTGRES);
        Table<?> orders = DSL.table(DSL.name(s, "orders"));
        Field<Long> idField = DSL.field(DSL.name(s, "orders", "id"), SQLDataType.BIGINT);
        Field<Long> fenceField = DSL.field(DSL.name(s, "orders", "fence_token"), SQLDataType.BIGINT);
        Field<Object> status = DSL.field(DSL.name("status"));
        FenceToken fence = FenceToken.of(7);
        Assignments paid = Assignments.of("status", "paid");
        Harness.Op fencedUpdate = (t, i) -> {
            if (!fenced.update(1L + t * 250 + (i % 250), fence, paid).isApplied()) {
                throw new IllegalStateException("not applied");
            }
        };
        Harness.Op jooqUpdate = (t, i) -> {
            if (dsl.update(orders).set(status, "paid").set(fenceField, 7L).where(idField.eq(1L + t * 250 + (i % 250))).execute() != 1) {
                throw new IllegalStateException("not applied");
            }
        };
        String plainSql = "UPDATE " + s + ".orders SET status = ?, fence_token = ? WHERE id = ?";
        Harness.Op jdbcUpdate = (t, i) -> {
            try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(plainSql)) {
                ps.setString(1, "paid");
                ps.setLong(2, 7);
                ps.setLong(3, 1L + t * 250 + (i % 250));
                ps.executeUpdate();
            }
        };
        h.measure(fencedUpdate);
        h.measure(jooqUpdate);
        Harness.Phase[] r2 = h.compare(rounds, fencedUpdate, jooqUpdate);
        report("fenced UPDATE ops/s", r2[0], "same jOOQ UPDATE, no fence predicate", r2[1], ">= 0.9x",
                r2[0].opsPerSecond() / r2[1].opsPerSecond() >= 0.9);
        h.measure(jdbcUpdate);
        Harness.Phase[] r2b = h.compare(rounds, fencedUpdate, jdbcUpdate);
        report("fenced UPDATE ops/s", r2b[0], "plain JDBC prepared UPDATE", r2b[1], "(reported)", true);

        // 3. acquire latency, 1,000,000 vs 1,000 keys in the table: random existing keys, released untimed.
        Harness.Op acquireLarge = (t, i) -> acquireOnce(large, 1_000_000, ttl);
        Harness.Op acquireSmall = (t, i) -> acquireOnce(small, 1_000, ttl);
        h.measure(acquireLarge);
        h.measure(acquireSmall);
        Harness.Phase[] r3 = h.compare(rounds, acquireLarge, acquireSmall);
        System.out.printf(Locale.ROOT, "%-40s p50 %5d us  p99 %5d us%n%-40s p50 %5d us  p99 %5d us%n  ratio p50 %.2fx, p99 %.2fx (target p50 <= 1.25x): %s%n%n",
                "acquire+release latency, 1,000,000 keys", r3[0].p50Micros(), r3[0].p99Micros(),
                "acquire+release latency, 1,000 keys", r3[1].p50Micros(), r3[1].p99Micros(),
                (double) r3[0].p50Micros() / r3[1].p50Micros(), (double) r3[0].p99Micros() / r3[1].p99Micros(),
                (double) r3[0].p50Micros() / r3[1].p50Micros() <= 1.25 ? "MET" : "MISSED");
    }

    private static void acquireOnce(BlockingBackend backend, int keys, java.time.Duration ttl) {
        LockKey key = LockKey.of("bench:" + (1 + ThreadLocalRandom.current().nextInt(keys)));
        LockId id = LockId.random();
        if (backend.tryAcquire(key, id, ttl).isPresent()) {
            backend.release(key, id);
        }
    }

    private static void report(String name, Harness.Phase a, String baseline, Harness.Phase b, String target, boolean met) {
        System.out.printf(Locale.ROOT, "%-40s %9.0f/s  p50 %5d us%n%-40s %9.0f/s  p50 %5d us%n  ratio %.2fx (target %s): %s%n%n",
                name, a.opsPerSecond(), a.p50Micros(), baseline, b.opsPerSecond(), b.p50Micros(),
                a.opsPerSecond() / b.opsPerSecond(), target, met ? "MET" : "MISSED");
    }

    private static void update(HikariDataSource pool, String sql, long id) throws Exception {
        try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setLong(1, id);
            ps.executeUpdate();
        }
    }

    private static void exec(HikariDataSource pool, String sql) throws Exception {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
