package dev.fenceguard.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.idempotency.Fingerprint;
import dev.fenceguard.core.idempotency.IdempotencyMetrics;
import dev.fenceguard.core.idempotency.IdempotencyResult;
import dev.fenceguard.core.idempotency.AsyncIdempotencyStore;
import dev.fenceguard.core.idempotency.IdempotencyStore;
import dev.fenceguard.core.idempotency.ResultCodec;
import dev.fenceguard.core.leader.LeaderElection;
import dev.fenceguard.core.leader.LeaderMetrics;
import dev.fenceguard.core.leader.Leadership;
import dev.fenceguard.core.leader.LeadershipListener;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The coordination primitives of issue #11 on PostgreSQL, each as a ratio against the simplest
 * correct baseline measured in the same run, on the same pool and threads:
 * <ol>
 *   <li>an idempotent call on a new key ({@link AsyncIdempotencyStore#call}: fenced claim, the work, fenced
 *       record) vs the same two steps written by hand as {@code INSERT .. ON CONFLICT DO NOTHING} and
 *       {@code UPDATE .. WHERE idem_key = ? AND fence = ?} (fenced record, no takeover, no fingerprint);</li>
 *   <li>a retry that replays a recorded result vs a {@code SELECT} of the result by primary key;</li>
 *   <li>a leadership handover ({@link LeaderElection#resign()} until another term's {@code elected}) vs
 *       the bare lock handover it is made of: one client releases, another's {@code tryAcquire} takes it.</li>
 * </ol>
 * Server: {@link TestPostgres#server()}. Arguments: {@code [seconds-per-phase=5] [threads=4] [rounds=3]}
 * (the handover runs on one thread: there is one leadership).
 */
public final class CoordinationBenchmark {

    private static final Duration LONG = Duration.ofSeconds(30);

    public static void main(String[] args) throws Exception {
        Harness.Args cli = Harness.Args.of(args, 5, 4, 3);
        Harness.onPostgres("coordbench", cli, (s, pool) -> {
            idempotency(s, pool, new Harness(cli.threads(), cli.seconds()), cli.rounds());
            election(s, pool, new Harness(1, cli.seconds()), cli.rounds());
        });
        System.exit(0); // the election's timer threads
    }

    private static void idempotency(String s, HikariDataSource pool, Harness h, int rounds) throws Exception {
        FenceGuardMigrations.idempotencyBuilder(pool).withSchema(s).withTable("idem").migrate();
        FenceGuardMigrations.idempotencyBuilder(pool).withSchema(s).withTable("idem_manual").migrate();
        AsyncIdempotencyStore store = IdempotencyStore.builder(FenceGuardJdbc.builder(pool).withSchema(s).withIdempotencyTable("idem").build().idempotencyBackend())
                .withMetrics(IdempotencyMetrics.none()).build().async();
        ResultCodec<String> codec = ResultCodec.utf8();
        Fingerprint fp = Fingerprint.ofParts("charge", "4200", "EUR");
        FenceToken fence = FenceToken.of(7);
        AtomicLong fresh = new AtomicLong();
        Harness.Op storeCall = (t, i) -> {
            String key = "bench:" + fresh.incrementAndGet();
            IdempotencyResult<String> r = store.call(key, fp, fence, LONG, codec, () -> CompletableFuture.completedFuture("ch_" + key))
                    .toCompletableFuture().join();
            if (!(r instanceof IdempotencyResult.Executed)) {
                throw new IllegalStateException("not executed: " + r);
            }
        };
        String claim = "INSERT INTO " + s + ".idem_manual (idem_key, state, fingerprint, fence, expires_at, retain_until, result) "
                + "VALUES (?, 'P', ?, ?, clock_timestamp() + interval '30 seconds', clock_timestamp() + interval '1 day', ''::bytea) "
                + "ON CONFLICT (idem_key) DO NOTHING";
        String record = "UPDATE " + s + ".idem_manual SET state = 'C', result = ?, expires_at = clock_timestamp() "
                + "WHERE idem_key = ? AND fence = ?";
        AtomicLong manualFresh = new AtomicLong();
        Harness.Op manualCall = (t, i) -> {
            String key = "bench:" + manualFresh.incrementAndGet();
            try (Connection c = pool.getConnection()) {
                try (PreparedStatement ps = c.prepareStatement(claim)) {
                    ps.setString(1, key);
                    ps.setString(2, fp.hex());
                    ps.setLong(3, 7);
                    if (ps.executeUpdate() != 1) {
                        throw new IllegalStateException("not claimed");
                    }
                }
            }
            byte[] result = codec.encode("ch_" + key);
            try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(record)) {
                ps.setBytes(1, result);
                ps.setString(2, key);
                ps.setLong(3, 7);
                if (ps.executeUpdate() != 1) {
                    throw new IllegalStateException("not recorded");
                }
            }
        };
        h.measure(storeCall);
        h.measure(manualCall);
        Harness.Phase[] r1 = h.compare(rounds, storeCall, manualCall);
        report("idempotent call, new key", r1[0], "INSERT ON CONFLICT DO NOTHING + fenced UPDATE", r1[1]);

        // Retries: every thread replays keys recorded above.
        long recorded = fresh.get();
        Harness.Op storeReplay = (t, i) -> {
            String key = "bench:" + (1 + (t * 1_000L + i) % Math.min(recorded, 4_000));
            IdempotencyResult<String> r = store.call(key, fp, fence, LONG, codec, () -> CompletableFuture.completedFuture("never"))
                    .toCompletableFuture().join();
            if (!(r instanceof IdempotencyResult.Replayed)) {
                throw new IllegalStateException("not replayed: " + r);
            }
        };
        String select = "SELECT result FROM " + s + ".idem_manual WHERE idem_key = ?";
        long manualRecorded = manualFresh.get();
        Harness.Op manualReplay = (t, i) -> {
            String key = "bench:" + (1 + (t * 1_000L + i) % Math.min(manualRecorded, 4_000));
            try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(select)) {
                ps.setString(1, key);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new IllegalStateException("no row");
                    }
                    codec.decode(rs.getBytes(1));
                }
            }
        };
        h.measure(storeReplay);
        h.measure(manualReplay);
        Harness.Phase[] r2 = h.compare(rounds, storeReplay, manualReplay);
        report("idempotent retry, replayed", r2[0], "SELECT result by primary key", r2[1]);
    }

    private static void election(String s, HikariDataSource pool, Harness h, int rounds) throws Exception {
        FenceGuardMigrations.builder(pool).withSchema(s).withTable("locks").migrate();
        LockBackend backend = FenceGuardJdbc.builder(pool).withSchema(s).withLockTable("locks").build().lockBackend();
        Semaphore elected = new Semaphore(0);
        LeadershipListener listener = new LeadershipListener() {
            @Override
            public void elected(Leadership leadership) {
                elected.release();
            }
        };
        // Two candidates as two processes would be: a client each, with a short backoff so that a
        // waiting candidate notices a resignation within a few milliseconds.
        List<LeaderElection> candidates = List.of(candidate(backend, listener), candidate(backend, listener));
        candidates.forEach(LeaderElection::start);
        await(elected);
        Harness.Op handover = (t, i) -> {
            LeaderElection leader = candidates.stream().filter(LeaderElection::isLeader).findFirst().orElseThrow();
            leader.resign();
            await(elected);
        };
        LockClient x = LockClient.builder(backend).withMetrics(LockMetrics.none()).build();
        LockClient y = LockClient.builder(backend).withMetrics(LockMetrics.none()).build();
        Lease[] held = {x.tryAcquire("bare-lock", LONG).orElseThrow()};
        LockClient[] next = {y};
        Harness.Op bare = (t, i) -> {
            held[0].close(); // release, waited for
            held[0] = next[0].tryAcquire("bare-lock", LONG).orElseThrow();
            next[0] = next[0] == x ? y : x;
        };
        h.measure(handover);
        h.measure(bare);
        Harness.Phase[] r = h.compare(rounds, handover, bare);
        report("leadership handovers/s (resign -> elected)", r[0], "release + tryAcquire by another client", r[1]);
        candidates.forEach(LeaderElection::stop);
        held[0].close();
    }

    private static LeaderElection candidate(LockBackend backend, LeadershipListener listener) {
        LockClient client = LockClient.builder(backend).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(1), Duration.ofMillis(5)).build();
        return LeaderElection.builder(client, "bench-leader").withTtl(LONG).withRetryDelay(Duration.ofMillis(2))
                .withMetrics(LeaderMetrics.none()).onEvents(listener).build();
    }

    private static void await(Semaphore s) throws InterruptedException {
        if (!s.tryAcquire(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no election within 10 s");
        }
    }

    private static void report(String name, Harness.Phase a, String baseline, Harness.Phase b) {
        System.out.printf(Locale.ROOT, "%-44s %9.0f/s  p50 %5d us  p99 %6d us%n%-44s %9.0f/s  p50 %5d us  p99 %6d us%n  ratio %.2fx%n%n",
                name, a.opsPerSecond(), a.p50Micros(), a.p99Micros(), baseline, b.opsPerSecond(), b.p50Micros(), b.p99Micros(),
                a.opsPerSecond() / b.opsPerSecond());
    }
}
