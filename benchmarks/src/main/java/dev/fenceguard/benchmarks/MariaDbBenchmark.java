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
import dev.fenceguard.testkit.servers.TestMariaDb;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;

/**
 * MariaDB benchmarks, each a ratio against a baseline measured in the same run, on the same pool and threads:
 * acquire + release pairs/s vs two plain single-row {@code UPDATE}s; fenced {@code UPDATE} and fenced
 * upsert vs the plain JDBC statement without the rule. Server: {@link TestMariaDb#server()}.
 * Arguments: {@code [seconds-per-phase=5] [threads=4] [rounds=3]}.
 */
public final class MariaDbBenchmark {

    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);

    public static void main(String[] args) throws Exception {
        Harness.Args cli = Harness.Args.of(args, 5, 4, 3);
        Harness.onMariaDb("bench", cli, (s, pool) -> run(s, pool, new Harness(cli.threads(), cli.seconds()), cli.rounds()));
    }

    private static void run(String s, HikariDataSource pool, Harness h, int rounds) throws Exception {
        exec(pool, "CREATE TABLE " + s + ".baseline (id BIGINT PRIMARY KEY, v BIGINT NOT NULL)");
        exec(pool, "INSERT INTO " + s + ".baseline SELECT seq, 0 FROM seq_1_to_1000");
        exec(pool, "CREATE TABLE " + s + ".orders (id BIGINT PRIMARY KEY, status VARCHAR(20) NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)");
        exec(pool, "INSERT INTO " + s + ".orders SELECT seq, 'new', 0 FROM seq_1_to_1000");
        FenceGuardMigrations.builder(pool).withSchema(s).withTable("locks").migrate();
        BlockingBackend locks = new BlockingBackend(FenceGuardJdbc.builder(pool).withSchema(s).withLockTable("locks").build().lockBackend(), CALL_TIMEOUT);
        Duration ttl = Duration.ofSeconds(30);

        // 1. acquire + release vs two single-row UPDATEs; each thread owns its keys and rows: no contention.
        String bump = "UPDATE " + s + ".baseline SET v = v + 1 WHERE id = ?";
        Harness.Op acquireRelease = (t, i) -> {
            LockKey key = LockKey.of("bench:" + (1 + t * 250 + (i % 250)));
            LockId id = LockId.random();
            locks.tryAcquire(key, id, ttl).orElseThrow();
            if (!locks.release(key, id)) {
                throw new IllegalStateException("release failed");
            }
        };
        Harness.Op twoUpdates = (t, i) -> {
            long id = 1 + t * 250 + (i % 250);
            update(pool, bump, id, null);
            update(pool, bump, id, null);
        };
        compare(h, rounds, "acquire+release pairs/s", acquireRelease, "2 x UPDATE .. WHERE pk = ?", twoUpdates);

        // 2. fenced UPDATE vs the plain prepared UPDATE; the status alternates so that each write changes the row.
        FencedWriter fenced = FencedTable.builder(s, "orders", "id", "fence_token").withKeyType(Long.class).build().on(pool);
        FenceToken fence = FenceToken.of(7);
        Harness.Op fencedUpdate = (t, i) -> {
            if (!fenced.update(1L + t * 250 + (i % 250), fence, Assignments.of("status", "s" + (i % 2))).isApplied()) {
                throw new IllegalStateException("not applied");
            }
        };
        String plain = "UPDATE " + s + ".orders SET status = ?, fence_token = 7 WHERE id = ?";
        Harness.Op plainUpdate = (t, i) -> update(pool, plain, 1L + t * 250 + (i % 250), "s" + (i % 2));
        compare(h, rounds, "fenced UPDATE ops/s", fencedUpdate, "plain JDBC prepared UPDATE", plainUpdate);

        // 3. fenced upsert (guarded ON DUPLICATE KEY UPDATE, stale check in the same reply) vs a plain upsert.
        Harness.Op fencedUpsert = (t, i) -> {
            if (!fenced.upsert(1L + t * 250 + (i % 250), fence, Assignments.of("status", "u" + (i % 2))).isApplied()) {
                throw new IllegalStateException("not applied");
            }
        };
        String plainUpsertSql = "INSERT INTO " + s + ".orders (status, id, fence_token) VALUES (?, ?, 7) "
                + "ON DUPLICATE KEY UPDATE status = VALUES(status), fence_token = VALUES(fence_token)";
        Harness.Op plainUpsert = (t, i) -> update(pool, plainUpsertSql, 1L + t * 250 + (i % 250), "u" + (i % 2));
        compare(h, rounds, "fenced upsert ops/s", fencedUpsert, "plain INSERT .. ON DUPLICATE KEY UPDATE", plainUpsert);
    }

    private static void compare(Harness h, int rounds, String name, Harness.Op a, String baseline, Harness.Op b) throws Exception {
        h.measure(a); // warm-up
        h.measure(b);
        Harness.Phase[] r = h.compare(rounds, a, b);
        System.out.printf(Locale.ROOT, "%-40s %9.0f/s  p50 %5d us%n%-40s %9.0f/s  p50 %5d us%n  ratio %.2fx%n%n",
                name, r[0].opsPerSecond(), r[0].p50Micros(), baseline, r[1].opsPerSecond(), r[1].p50Micros(),
                r[0].opsPerSecond() / r[1].opsPerSecond());
    }

    /** Runs {@code sql} with {@code text} (if any) then {@code id} bound, as a hand-written JDBC call would. */
    private static void update(HikariDataSource pool, String sql, long id, String text) throws Exception {
        try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            int i = 1;
            if (text != null) {
                ps.setString(i++, text);
            }
            ps.setLong(i, id);
            ps.executeUpdate();
        }
    }

    private static void exec(HikariDataSource pool, String sql) throws Exception {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
