package dev.fenceguard.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
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
import java.util.DoubleSummaryStatistics;
import java.util.List;
import java.util.Locale;
import java.util.function.LongFunction;

/**
 * MariaDB benchmarks, each a ratio against a baseline measured in the same run, on the same pool and threads:
 * acquire + release pairs/s vs two plain single-row {@code UPDATE}s; fenced {@code UPDATE} and fenced
 * upsert vs the plain JDBC statement without the rule, each write changing its row (so that each commits a
 * change, as a real write does); and the fenced upsert vs the plain one when every write leaves its row as it
 * was (what the issue #13 figures measured: no change, nothing for the commit to flush). Server:
 * {@link TestMariaDb#server()}. Arguments: {@code [seconds-per-phase=5] [threads=4] [rounds=3]}.
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
        // The same pair as users make it (issue #31): LockClient's blocking face, which lends its thread to the call.
        FenceGuardMigrations.builder(pool).withSchema(s).withTable("client_locks").migrate();
        LockClient client = LockClient.of(FenceGuardJdbc.builder(pool).withSchema(s).withLockTable("client_locks").build().lockBackend());
        Harness.Op clientPair = (t, i) -> {
            Lease lease = client.tryAcquire("bench:" + (1 + t * 250 + (i % 250)), ttl).orElseThrow();
            if (!client.release(lease)) {
                throw new IllegalStateException("release failed");
            }
        };
        compare(h, rounds, "LockClient acquire+release pairs/s", clientPair, "2 x UPDATE .. WHERE pk = ?", twoUpdates);

        // 2. fenced UPDATE vs the plain prepared UPDATE. A thread visits each of its 250 keys every 250 iterations, and
        // the status flips from one visit to the next, so that each write changes its row. (Until issue #31 it was
        // "s" + (i % 2), which is the same on every visit of a key: after the first round every write, fenced or
        // plain, left its row as it was, and its commit had nothing to flush.)
        FencedWriter fenced = FencedTable.builder(s, "orders", "id", "fence_token").withKeyType(Long.class).build().on(pool);
        FenceToken fence = FenceToken.of(7);
        Harness.Op fencedUpdate = (t, i) -> {
            if (!fenced.update(1L + t * 250 + (i % 250), fence, Assignments.of("status", flipped("s", i))).isApplied()) {
                throw new IllegalStateException("not applied");
            }
        };
        String plain = "UPDATE " + s + ".orders SET status = ?, fence_token = 7 WHERE id = ?";
        Harness.Op plainUpdate = (t, i) -> update(pool, plain, 1L + t * 250 + (i % 250), flipped("s", i));
        compare(h, rounds, "fenced UPDATE ops/s", fencedUpdate, "plain JDBC prepared UPDATE", plainUpdate);

        // 3. fenced upsert (guarded ON DUPLICATE KEY UPDATE, stale check in the same reply) vs a plain upsert, each write
        // changing its row.
        String plainUpsertSql = "INSERT INTO " + s + ".orders (status, id, fence_token) VALUES (?, ?, 7) "
                + "ON DUPLICATE KEY UPDATE status = VALUES(status), fence_token = VALUES(fence_token)";
        compare(h, rounds, "fenced upsert ops/s", upsert(fenced, fence, i -> flipped("u", i)), "plain INSERT .. ON DUPLICATE KEY UPDATE",
                (t, i) -> update(pool, plainUpsertSql, 1L + t * 250 + (i % 250), flipped("u", i)));

        // 4. The same, every write leaving its row as it was (the issue #13 regime): no change to commit, so what is
        // compared is the statements' CPU on both sides of the socket.
        compare(h, rounds, "fenced upsert, row unchanged", upsert(fenced, fence, i -> "same"), "plain upsert, row unchanged",
                (t, i) -> update(pool, plainUpsertSql, 1L + t * 250 + (i % 250), "same"));
    }

    /** {@code prefix} and 0 or 1, flipping from one visit of a key (every 250 iterations of its thread) to the next. */
    private static String flipped(String prefix, long i) {
        return prefix + ((i / 250) % 2);
    }

    /** {@code FencedWriter.upsert} of the thread's keys in turn, the status {@code status.apply(i)}, which must apply. */
    private static Harness.Op upsert(FencedWriter fenced, FenceToken fence, LongFunction<String> status) {
        return (t, i) -> {
            if (!fenced.upsert(1L + t * 250 + (i % 250), fence, Assignments.of("status", status.apply(i))).isApplied()) {
                throw new IllegalStateException("not applied");
            }
        };
    }

    private static void compare(Harness h, int rounds, String name, Harness.Op a, String baseline, Harness.Op b) throws Exception {
        h.measure(a); // warm-up
        h.measure(b);
        List<List<Harness.Phase>> phases = h.compare(rounds, List.of(a, b));
        Harness.Phase fg = Harness.median(phases.get(0));
        Harness.Phase base = Harness.median(phases.get(1));
        System.out.printf(Locale.ROOT, "%-40s %9.0f/s %s  p50 %5d us%n%-40s %9.0f/s %s  p50 %5d us%n  ratio %.2fx%n%n",
                name, fg.opsPerSecond(), spread(phases.get(0)), fg.p50Micros(), baseline, base.opsPerSecond(), spread(phases.get(1)),
                base.p50Micros(), fg.opsPerSecond() / base.opsPerSecond());
    }

    /** The rounds' lowest and highest throughput, {@code [min..max]}: the spread the median hides. */
    private static String spread(List<Harness.Phase> rounds) {
        DoubleSummaryStatistics s = rounds.stream().mapToDouble(Harness.Phase::opsPerSecond).summaryStatistics();
        return String.format(Locale.ROOT, "[%.0f..%.0f]", s.getMin(), s.getMax());
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
