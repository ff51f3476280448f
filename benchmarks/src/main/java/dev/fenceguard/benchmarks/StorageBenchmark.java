package dev.fenceguard.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.jooq.FencedWriter;
import dev.fenceguard.migrations.FenceColumn;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.migrations.TombstoneIndex;
import dev.fenceguard.redis.AsyncFencedRedis;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.redis.RedisLockBackend;
import dev.fenceguard.testkit.servers.RedisServers;
import dev.fenceguard.testkit.servers.TestMariaDb;
import dev.fenceguard.testkit.servers.TestPostgres;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * Storage over time (issue #30, docs/fence-lifecycle.md): what fence records cost while they are kept
 * and what the purges and expiries give back.
 * <ol>
 *   <li>{@code pg}: N resource rows on PostgreSQL, all deleted with fenced deletes (tombstones), then
 *       {@link FencedWriter#purge}; sizes before, after, after the purge, after {@code VACUUM} and after
 *       {@code VACUUM FULL}; the purge's rows/s.</li>
 *   <li>{@code locks}: L lock keys acquired and released on PostgreSQL ({@code CLOCK_FLOORED}, margin 0),
 *       then {@link FenceGuardJdbc#purgeLocks}; the same sizes.</li>
 *   <li>{@code redis}: N {@code CLOCK_FLOORED} lock pairs and N fenced {@code SET} + {@code DELETE} on a
 *       private {@code redis-server}; {@code used_memory} and {@code DBSIZE} until the records have expired.</li>
 *   <li>{@code churn}: K rounds of M keys created and deleted on three PostgreSQL tables: no purge, a purge
 *       every second plus {@code VACUUM} after each round, a purge every second with autovacuum alone.</li>
 *   <li>{@code firestore}: on the Firestore emulator ({@link FirestoreStorage}), F documents created, deleted
 *       with fenced deletes and purged, in R rounds; FL lock documents acquired, released and purged; and the
 *       churn on two collections, one purged every second. The emulator has no storage-size API: it counts
 *       documents. {@code fs-tombstones}, {@code fs-locks} and {@code fs-churn} run one of the three.</li>
 *   <li>{@code maria}: N resource rows on MariaDB, all deleted with fenced deletes, then {@link FencedWriter#purge},
 *       against a baseline in the same run (a plain batched {@code DELETE} of a copy of the tombstones); InnoDB
 *       sizes before, after, after InnoDB's own purge has caught up, and after {@code OPTIMIZE TABLE}.</li>
 *   <li>{@code maria-locks}: L lock keys acquired and released on MariaDB ({@code CLOCK_FLOORED}, margin 0), then
 *       {@link FenceGuardJdbc#purgeLocks}; the same sizes.</li>
 *   <li>{@code maria-churn}: K rounds of M keys created and deleted on two MariaDB tables: no purge, a purge every
 *       second.</li>
 * </ol>
 * Arguments: {@code [parts=pg,locks,redis,churn] [n=1000000] [lockKeys=100000] [churnRounds=10]
 * [churnKeys=5000] [threads=4] [redisMarginSeconds=120] [firestoreN=50000] [firestoreRounds=3]
 * [firestoreLockKeys=10000]}; the parts {@code maria}, {@code maria-locks}, {@code maria-churn} and
 * {@code firestore} (or one of {@code fs-*}) are named explicitly.
 */
public final class StorageBenchmark {

    /** The shortest horizon a store accepts: records may go one second after their fence. */
    private static final Duration H = Duration.ofSeconds(1);
    /** No clock margin on PostgreSQL and MariaDB: the benchmark's clock does not step back (the margin only delays a purge). */
    private static final Duration M = Duration.ZERO;
    private static final Duration CALL = Duration.ofSeconds(30);
    private static final String BODY_TEXT = "order placed, 1 item, EUR 12.50";
    private static final Assignments BODY = Assignments.of("body", BODY_TEXT);

    public static void main(String[] args) throws Exception {
        Set<String> parts = Set.of((args.length > 0 ? args[0] : "pg,locks,redis,churn,maria,maria-locks,maria-churn").split(","));
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000;
        int lockKeys = args.length > 2 ? Integer.parseInt(args[2]) : 100_000;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 10;
        int churnKeys = args.length > 4 ? Integer.parseInt(args[4]) : 5_000;
        int threads = args.length > 5 ? Integer.parseInt(args[5]) : 4;
        Duration redisMargin = Duration.ofSeconds(args.length > 6 ? Long.parseLong(args[6]) : 120);
        int firestoreN = args.length > 7 ? Integer.parseInt(args[7]) : 50_000;
        int firestoreRounds = args.length > 8 ? Integer.parseInt(args[8]) : 3;
        int firestoreLockKeys = args.length > 9 ? Integer.parseInt(args[9]) : 10_000;
        System.out.printf(Locale.ROOT, "StorageBenchmark %s: n=%,d lockKeys=%,d churn %d x %,d keys, %d threads, horizon %s, "
                + "margin %s (Redis %s); load %s%n", parts, n, lockKeys, rounds, churnKeys, threads, H, M, redisMargin, load());
        if (parts.contains("pg") || parts.contains("locks") || parts.contains("churn")) {
            TestPostgres server = TestPostgres.server();
            try (TestPostgres.Schema schema = server.newSchema("storage"); HikariDataSource pool = Harness.pool(schema.dataSource(), threads + 2)) {
                System.out.printf("PostgreSQL %s (%s), schema %s%n", server.version(), server.origin(), schema.name());
                String s = schema.name();
                if (parts.contains("pg")) {
                    tombstones(pool, s, n, threads);
                }
                if (parts.contains("locks")) {
                    lockRows(pool, s, lockKeys, threads, new PgSql(pool, s));
                }
                if (parts.contains("churn")) {
                    churn(pool, s, rounds, churnKeys, threads);
                }
            }
        }
        if (parts.contains("redis")) {
            redis(n, redisMargin);
        }
        if (parts.contains("firestore") || parts.contains("fs-tombstones") || parts.contains("fs-locks") || parts.contains("fs-churn")) {
            boolean all = parts.contains("firestore");
            FirestoreStorage.run(all || parts.contains("fs-tombstones") ? firestoreN : 0, firestoreRounds,
                    all || parts.contains("fs-locks") ? firestoreLockKeys : 0, all || parts.contains("fs-churn") ? rounds : 0, churnKeys);
        }
        if (parts.contains("maria") || parts.contains("maria-locks") || parts.contains("maria-churn")) {
            mariaDb(parts, n, lockKeys, rounds, churnKeys, threads);
        }
        System.out.printf("done; load %s%n", load());
    }

    // --- 1. PostgreSQL tombstones -----------------------------------------------------------------------

    private static void tombstones(HikariDataSource pool, String s, int n, int threads) throws Exception {
        System.out.printf(Locale.ROOT, "%n== PostgreSQL resource tombstones, %,d keys; load %s%n", n, load());
        FencedTable items = resourceTable(pool, s, "items");
        String t = s + ".items";
        print("empty table", size(pool, t, "fence_deleted"), n);

        // Bulk INSERT of the rows a fenced upsert of a new key leaves (key, body, fence, not deleted): the
        // storage is the same, and a million single-row upserts would take minutes that measure nothing here.
        long f0 = dbTick(pool);
        long t0 = System.nanoTime();
        exec(pool, "INSERT INTO " + t + " (id, body, fence_token) SELECT g, '" + BODY_TEXT + "', "
                + f0 + " FROM generate_series(1, " + n + ") g");
        exec(pool, "VACUUM ANALYZE " + t);
        System.out.printf(Locale.ROOT, "bulk INSERT of %,d live rows (fence %d): %.1f s%n", n, f0, secs(t0));
        print("N live rows", size(pool, t, "fence_deleted"), n);

        FenceToken deleteFence = FenceToken.of(dbTick(pool));
        t0 = System.nanoTime();
        inParallel(pool, threads, n, 1_000, (c, id) -> requireApplied(items.on(c).delete(id, deleteFence), "delete " + id));
        double deleteSecs = secs(t0);
        System.out.printf(Locale.ROOT, "%,d fenced deletes (%d threads, commit every 1,000): %.1f s, %,.0f/s%n", n, threads, deleteSecs, n / deleteSecs);
        print("N tombstones", size(pool, t, "fence_deleted"), n);

        awaitPurgeable(() -> dbTick(pool), deleteFence.value());
        purgeAndVacuum(pool, t, "fence_deleted", n, () -> items.on(pool).purge(bigBatches()));
    }

    /** A table shaped as docs/postgresql.md shows, with the tombstone index the purge wants, fenced with the horizon. */
    private static FencedTable resourceTable(HikariDataSource pool, String s, String name) throws Exception {
        exec(pool, "CREATE TABLE " + s + "." + name + " (id BIGINT PRIMARY KEY, body TEXT, fence_token BIGINT NOT NULL DEFAULT 0, "
                + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        exec(pool, TombstoneIndex.on(FenceColumn.on(s, name).withTombstoneColumn("fence_deleted"), "id").statement());
        return FencedTable.builder(s, name, "id", "fence_token").withKeyType(Long.class).withTombstoneColumn("fence_deleted")
                .withHorizon(H).withClockMargin(M).withMetrics(LockMetrics.none()).build();
    }

    // --- 2. SQL lock rows ---------------------------------------------------------------------------------

    private static void lockRows(HikariDataSource pool, String s, int keys, int threads, Sql sql) throws Exception {
        System.out.printf(Locale.ROOT, "%n== %s lock rows, %,d keys acquired and released (CLOCK_FLOORED, margin 0); load %s%n", sql.name(), keys, load());
        FenceGuardMigrations.builder(pool).withSchema(s).withTable("locks").migrate();
        try (FenceGuardJdbc jdbc = FenceGuardJdbc.builder(pool).withSchema(s).withLockTable("locks").withFenceStrategy(FenceStrategy.CLOCK_FLOORED)
                .withClockMargin(M).withMetrics(LockMetrics.none()).build()) {
            LockBackend locks = jdbc.lockBackend();
            sql.print("empty lock table", "locks", "lock_id IS NULL", keys);
            AtomicLong highest = new AtomicLong();
            long t0 = System.nanoTime();
            // The backend takes its own connections from the pool; these threads only wait on its calls.
            onThreads(threads, thread -> {
                for (long i = 1 + thread; i <= keys; i += threads) {
                    LockKey key = LockKey.of("order:" + i);
                    LockId id = LockId.random();
                    long fence = locks.tryAcquire(key, id, Duration.ofSeconds(30), CALL).toCompletableFuture().join().orElseThrow().fence();
                    highest.accumulateAndGet(fence, Math::max);
                    if (!locks.release(key, id, CALL).toCompletableFuture().join()) {
                        throw new IllegalStateException("release of " + key + " failed");
                    }
                }
            });
            double pairSecs = secs(t0);
            System.out.printf(Locale.ROOT, "%,d acquire + release pairs (%d threads): %.1f s, %,.0f pairs/s%n", keys, threads, pairSecs, keys / pairSecs);
            sql.print("N free lock rows", "locks", "lock_id IS NULL", keys);
            awaitPurgeable(sql::tick, highest.get());
            sql.purgeAndReclaim("locks", "lock_id IS NULL", keys, () -> jdbc.purgeLocks(bigBatches()));
        }
    }

    /** What the lock-row part needs of its database: its clock floor, a table's size, and how it gives space back after a purge. */
    interface Sql {
        String name();

        long tick() throws Exception;

        /** Prints {@code table}'s size (in the part's namespace), {@code removable} the condition of the rows a purge may remove. */
        void print(String label, String table, String removable, long n) throws Exception;

        /** Runs {@code purge}, then the database's steps that give space back, printing the size after each. */
        void purgeAndReclaim(String table, String removable, int n, Supplier<PurgeResult> purge) throws Exception;

        HikariDataSource pool();

        /** Creates a resource table {@code name} as the database's docs show it, with its tombstone index, fenced with the horizon. */
        FencedTable resourceTable(String name) throws Exception;

        /** The churn table's column header for {@code table}. */
        String churnHeader(String table);

        /** {@code table}'s sizes in a churn line, under {@link #churnHeader}. */
        String churnCell(String table) throws Exception;
    }

    record PgSql(HikariDataSource pool, String schema) implements Sql {
        @Override
        public String name() {
            return "PostgreSQL";
        }

        @Override
        public long tick() throws Exception {
            return dbTick(pool);
        }

        @Override
        public void print(String label, String table, String removable, long n) throws Exception {
            StorageBenchmark.print(label, size(pool, schema + "." + table, removable), n);
        }

        @Override
        public void purgeAndReclaim(String table, String removable, int n, Supplier<PurgeResult> purge) throws Exception {
            purgeAndVacuum(pool, schema + "." + table, removable, n, purge);
        }

        @Override
        public FencedTable resourceTable(String name) throws Exception {
            return StorageBenchmark.resourceTable(pool, schema, name);
        }

        @Override
        public String churnHeader(String table) {
            return String.format(Locale.ROOT, "%-44s", table + ": rows, tombstones, total MB");
        }

        @Override
        public String churnCell(String table) throws Exception {
            Size z = size(pool, schema + "." + table, "fence_deleted");
            return String.format(Locale.ROOT, "%,9d %,9d %8.2f MB %16s", z.rows, z.removable, z.total / 1e6, "");
        }
    }

    record MariaSql(HikariDataSource pool, String database) implements Sql {
        @Override
        public String name() {
            return "MariaDB";
        }

        @Override
        public long tick() throws Exception {
            return mariaTick(pool);
        }

        @Override
        public void print(String label, String table, String removable, long n) throws Exception {
            printInnoDb(label, innoDbSize(pool, database, table, removable), n);
        }

        @Override
        public void purgeAndReclaim(String table, String removable, int n, Supplier<PurgeResult> purge) throws Exception {
            purgeAndOptimize(pool, database, table, removable, n, purge);
        }

        @Override
        public FencedTable resourceTable(String name) throws Exception {
            return mariaResourceTable(pool, database, name);
        }

        @Override
        public String churnHeader(String table) {
            return String.format(Locale.ROOT, "%-58s", table + ": rows, tombstones, data+index MB, free MB, file MB");
        }

        @Override
        public String churnCell(String table) throws Exception {
            InnoDbSize z = innoDbSize(pool, database, table, "fence_deleted");
            return String.format(Locale.ROOT, "%,9d %,9d %8.2f MB %6.2f MB %6.2f MB %12s", z.rows, z.removable, (z.data + z.index) / 1e6,
                    z.free / 1e6, z.file / 1e6, "");
        }
    }

    // --- shared by 1, 2 and 5 -------------------------------------------------------------------------------

    private static Purge bigBatches() {
        return Purge.ofDefaults().withBatchSize(10_000).withMaxDuration(Duration.ofHours(1));
    }

    /** Purges, then reports the sizes as the purge leaves them, after VACUUM, and after VACUUM FULL. */
    private static void purgeAndVacuum(HikariDataSource pool, String t, String removable, int n, Supplier<PurgeResult> purge) throws Exception {
        // Statistics taken before the mass delete say the table holds no tombstone. The purge's statements delete by
        // key = any(array(candidates)), whose plan does not depend on them; before that change an IN (candidates) was
        // planned as a nested loop over every tombstone per candidate (44.8 s for one batch of 10,000 among 20,000).
        // -Dstorage.analyze=true runs ANALYZE first, as autoanalyze would after such a burst.
        long t0 = System.nanoTime();
        if (Boolean.getBoolean("storage.analyze")) {
            exec(pool, "ANALYZE " + t);
            System.out.printf(Locale.ROOT, "ANALYZE: %.1f s%n", secs(t0));
        } else {
            System.out.println("no ANALYZE before the purge: statistics as the mass delete left them");
        }
        t0 = System.nanoTime();
        PurgeResult r = purge.get();
        double purgeSecs = secs(t0);
        System.out.printf(Locale.ROOT, "purge: removed %,d in %d batches of up to 10,000, complete=%s: %.1f s, %,.0f rows/s%n",
                r.removed(), r.batches(), r.complete(), purgeSecs, r.removed() / purgeSecs);
        print("after the purge (no VACUUM)", size(pool, t, removable), n);
        t0 = System.nanoTime();
        exec(pool, "VACUUM " + t);
        System.out.printf(Locale.ROOT, "VACUUM: %.1f s%n", secs(t0));
        print("after VACUUM", size(pool, t, removable), n);
        t0 = System.nanoTime();
        exec(pool, "VACUUM FULL " + t);
        System.out.printf(Locale.ROOT, "VACUUM FULL: %.1f s%n", secs(t0));
        print("after VACUUM FULL", size(pool, t, removable), n);
    }

    /** The database's clock floor, {@code tick(now)}. */
    interface Tick {
        long now() throws Exception;
    }

    /** Waits (polling the database's clock) until {@code tick(now - H - M)} is above {@code fence}. */
    private static void awaitPurgeable(Tick tick, long fence) throws Exception {
        long ago = H.plus(M).toNanos() / 1000 / ClockFloor.MICROS_PER_FENCE;
        long t0 = System.nanoTime();
        while (tick.now() - ago <= fence) {
            Thread.sleep(100);
        }
        System.out.printf(Locale.ROOT, "waited %.1f s for the database clock to pass the horizon%n", secs(t0));
    }

    // --- 3. Redis ---------------------------------------------------------------------------------------------

    private static void redis(int n, Duration margin) throws Exception {
        System.out.printf(Locale.ROOT, "%n== Redis, private redis-server, %,d lock pairs + %,d fenced SET+DELETE, horizon %s, margin %s; load %s%n",
                n, n, H, margin, load());
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri().toString()));
            try (StatefulRedisConnection<String, String> conn = client.connect(); StatefulRedisConnection<String, String> adminConn = client.connect();
                    FenceGuardRedis fg = FenceGuardRedis.builder(conn).withKeyPrefix("st:lock:").withFenceKeyPrefix("st:fence:")
                            .withFlightKeyPrefix("st:sf:").withHorizon(H).withClockMargin(margin).withMetrics(LockMetrics.none()).build()) {
                RedisCommands<String, String> admin = adminConn.sync();
                System.out.printf("Redis %s%n", info(admin, "server", "redis_version"));
                RedisLockBackend locks = fg.lockBackend();
                AsyncFencedRedis writes = fg.fencedWrites().async();
                redisLine(admin, "empty server", 0);

                long t0 = System.nanoTime();
                windowed(n, i -> {
                    LockKey key = LockKey.of("order:" + i);
                    LockId id = LockId.random();
                    return locks.tryAcquire(key, id, Duration.ofSeconds(30), CALL)
                            .thenCompose(g -> locks.release(key, id, CALL).thenApply(released -> {
                                if (g.isEmpty() || !released) {
                                    throw new IllegalStateException("lock pair on " + key + " failed");
                                }
                                return null;
                            }));
                });
                double lockSecs = secs(t0);
                System.out.printf(Locale.ROOT, "%,d acquire + release pairs (async, 256 in flight): %.1f s, %,.0f pairs/s%n", n, lockSecs, n / lockSecs);
                redisLine(admin, "after the lock pairs", n);

                t0 = System.nanoTime();
                windowed(n, i -> {
                    String key = "st:data:" + i;
                    FenceToken fence = FenceToken.of(ClockFloor.floorAtMicros(ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now())));
                    return writes.set(key, fence, BODY_TEXT).thenCompose(set -> {
                        requireApplied(set, "set " + key);
                        return writes.delete(key, fence);
                    }).thenApply(deleted -> {
                        requireApplied(deleted, "delete " + key);
                        return null;
                    });
                });
                double writeSecs = secs(t0);
                long lastWrite = System.nanoTime();
                System.out.printf(Locale.ROOT, "%,d fenced SET + DELETE (async, 256 in flight): %.1f s, %,.0f pairs/s%n", n, writeSecs, n / writeSecs);
                redisLine(admin, "after SET + DELETE", n);

                // The last records were due H + M after the last write (tombstones; counters went M after their release).
                // Redis removes expired keys lazily and in its active expiry cycle: this polls DBSIZE to see when.
                long due = lastWrite + H.plus(margin).toNanos();
                long giveUp = due + Duration.ofMinutes(10).toNanos();
                long lastPrint = 0;
                while (admin.dbsize() > 0 && System.nanoTime() < giveUp) {
                    if (System.nanoTime() - lastPrint > 10_000_000_000L) {
                        lastPrint = System.nanoTime();
                        redisLine(admin, String.format(Locale.ROOT, "%+.0f s from the last record's due time", (lastPrint - due) / 1e9), n);
                    }
                    Thread.sleep(200);
                }
                System.out.printf(Locale.ROOT, "DBSIZE reached %d at %+.1f s from the last record's due time (active expiry; nothing read the keys)%n",
                        admin.dbsize(), (System.nanoTime() - due) / 1e9);
                redisLine(admin, "after expiry", n);
            } finally {
                client.shutdown();
            }
        }
    }

    /** Runs {@code op(i)} for i in 1..n with at most 256 calls in flight; fails on the first failure. */
    static void windowed(int n, java.util.function.IntFunction<CompletionStage<?>> op) throws Exception {
        windowed(n, 256, op);
    }

    /** Runs {@code op(i)} for i in 1..n with at most {@code inFlight} calls in flight; fails on the first failure. */
    static void windowed(int n, int inFlight, java.util.function.IntFunction<CompletionStage<?>> op) throws Exception {
        Semaphore window = new Semaphore(inFlight);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int i = 1; i <= n && failure.get() == null; i++) {
            window.acquire();
            op.apply(i).whenComplete((v, e) -> {
                if (e != null) {
                    failure.compareAndSet(null, e);
                }
                window.release();
            });
        }
        window.acquire(inFlight);
        if (failure.get() != null) {
            throw new IllegalStateException("a call failed", failure.get());
        }
    }

    private static void redisLine(RedisCommands<String, String> admin, String label, int n) {
        long used = Long.parseLong(info(admin, "memory", "used_memory"));
        System.out.printf(Locale.ROOT, "  %-44s DBSIZE %,10d  keys with TTL %,10d  used_memory %8.1f MB  rss %8.1f MB  expired_keys %,d%n",
                label, admin.dbsize(), keyspaceExpires(admin), used / 1e6, Long.parseLong(info(admin, "memory", "used_memory_rss")) / 1e6,
                Long.parseLong(info(admin, "stats", "expired_keys")));
    }

    private static String info(RedisCommands<String, String> admin, String section, String field) {
        return admin.info(section).lines().filter(l -> l.startsWith(field + ":")).findFirst().orElseThrow().substring(field.length() + 1).trim();
    }

    private static long keyspaceExpires(RedisCommands<String, String> admin) {
        return admin.info("keyspace").lines().filter(l -> l.startsWith("db0:")).findFirst()
                .map(l -> Long.parseLong(l.replaceAll(".*expires=(\\d+).*", "$1"))).orElse(0L);
    }

    // --- 4. Steady churn ------------------------------------------------------------------------------------

    private static void churn(HikariDataSource pool, String s, int rounds, int keys, int threads) throws Exception {
        churn(new PgSql(pool, s), List.of("churn_none", "churn_purge_vacuum", "churn_purge_auto"), 1, "churn_none (no purge; VACUUM after "
                + "each round), churn_purge_vacuum (purge every second; VACUUM after each round), churn_purge_auto (purge every second; "
                + "autovacuum only)", () -> {
                    exec(pool, "VACUUM " + s + ".churn_none");
                    exec(pool, "VACUUM " + s + ".churn_purge_vacuum");
                }, rounds, keys, threads);
        System.out.printf(Locale.ROOT, "autovacuum runs on churn_purge_auto: %s; load %s%n",
                one(pool, "SELECT autovacuum_count FROM pg_stat_user_tables WHERE schemaname = '" + s + "' AND relname = 'churn_purge_auto'"), load());
    }

    /** What runs after each churn round, e.g. a VACUUM. */
    interface AfterRound {
        void run() throws Exception;
    }

    /**
     * K rounds of M new keys created and deleted on each of {@code names} (tables made by {@link Sql#resourceTable}),
     * the tables from index {@code firstPurged} on purged every second beside the writes; a line of sizes per round.
     */
    private static void churn(Sql sql, List<String> names, int firstPurged, String tables, AfterRound afterRound, int rounds, int keys, int threads)
            throws Exception {
        System.out.printf(Locale.ROOT, "%n== Steady churn on %s: %d rounds, each creates (fenced upsert) and deletes (fenced delete) %,d new keys "
                + "on every table; load %s%n", sql.name(), rounds, keys, load());
        List<FencedTable> fenced = new ArrayList<>();
        for (String name : names) {
            fenced.add(sql.resourceTable(name));
        }
        System.out.println("tables: " + tables);
        AtomicLong purged = new AtomicLong();
        AtomicReference<Throwable> purgeFailure = new AtomicReference<>();
        ScheduledExecutorService schedule = purgeEverySecond(sql.pool(), fenced.subList(firstPurged, fenced.size()), purged, purgeFailure);
        try {
            System.out.printf("%-5s %-8s | %s%n", "round", "purged", String.join(" | ", names.stream().map(sql::churnHeader).toList()));
            for (int r = 0; r < rounds; r++) {
                for (FencedTable table : fenced) {
                    churnRound(sql.pool(), table, (long) r * keys + 1, keys, threads);
                }
                afterRound.run();
                StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-5d %-8s", r + 1, String.format(Locale.ROOT, "%,d", purged.get())));
                for (String name : names) {
                    line.append(" | ").append(sql.churnCell(name));
                }
                System.out.println(line);
                if (purgeFailure.get() != null) {
                    throw new IllegalStateException("the scheduled purge failed", purgeFailure.get());
                }
            }
        } finally {
            schedule.shutdownNow();
            schedule.awaitTermination(1, TimeUnit.MINUTES);
        }
    }

    /**
     * Creates keys {@code first .. first + keys - 1} (fenced upsert, one transaction each) and deletes each (fenced
     * delete, one transaction), on {@code threads} threads; fences from the JVM's clock floor, as a lock's would be.
     */
    private static void churnRound(HikariDataSource pool, FencedTable table, long first, int keys, int threads) throws Exception {
        inParallel(pool, threads, keys, 1, (c, i) -> {
            long id = first + i - 1;
            FenceToken fence = FenceToken.of(ClockFloor.floorAtMicros(ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now())));
            FencedWriter w = table.on(c);
            requireApplied(w.upsert(id, fence, BODY), "upsert " + id);
            c.commit();
            requireApplied(w.delete(id, fence), "delete " + id);
        });
    }

    /** Purges {@code tables} every second on a thread of its own, adding what it removed to {@code purged}; keeps the first failure. */
    private static ScheduledExecutorService purgeEverySecond(HikariDataSource pool, List<FencedTable> tables, AtomicLong purged,
            AtomicReference<Throwable> failure) {
        ScheduledExecutorService schedule = Executors.newSingleThreadScheduledExecutor();
        schedule.scheduleWithFixedDelay(() -> {
            try {
                for (FencedTable table : tables) {
                    purged.addAndGet(table.on(pool).purge(bigBatches()).removed());
                }
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        }, 1, 1, TimeUnit.SECONDS);
        return schedule;
    }

    // --- 5. MariaDB --------------------------------------------------------------------------------------------

    /**
     * The MariaDB parts in a database of their own on {@link TestMariaDb#server()} (dropped at the end), through
     * MariaDB Connector/J. InnoDB sizes come from {@code information_schema.TABLES} after {@code ANALYZE TABLE}
     * (persistent statistics: what it reports is what the last analysis saw) and from the tablespace file.
     */
    private static void mariaDb(Set<String> parts, int n, int lockKeys, int rounds, int churnKeys, int threads) throws Exception {
        TestMariaDb server = TestMariaDb.server();
        try (TestMariaDb.Database db = server.newDatabase("storage"); HikariDataSource pool = Harness.pool(db.dataSource(), threads + 2)) {
            System.out.printf("MariaDB %s (%s), database %s%n", server.version(), server.origin(), db.name());
            if (parts.contains("maria")) {
                mariaTombstones(pool, db.name(), n, threads);
            }
            if (parts.contains("maria-locks")) {
                lockRows(pool, db.name(), lockKeys, threads, new MariaSql(pool, db.name()));
            }
            if (parts.contains("maria-churn")) {
                mariaChurn(pool, db.name(), rounds, churnKeys, threads);
            }
        }
    }

    private static void mariaTombstones(HikariDataSource pool, String s, int n, int threads) throws Exception {
        System.out.printf(Locale.ROOT, "%n== MariaDB resource tombstones, %,d keys; load %s%n", n, load());
        FencedTable items = mariaResourceTable(pool, s, "items");
        String t = s + ".items";
        printInnoDb("empty table", innoDbSize(pool, s, "items", "fence_deleted"), n);

        // As on PostgreSQL, bulk INSERTs of the rows a fenced upsert of a new key leaves, from the sequence engine,
        // 100,000 rows a statement.
        long f0 = mariaTick(pool);
        long t0 = System.nanoTime();
        for (long from = 1; from <= n; from += 100_000) {
            exec(pool, "INSERT INTO " + t + " (id, body, fence_token) SELECT seq, '" + BODY_TEXT + "', " + f0 + " FROM seq_" + from + "_to_"
                    + Math.min(n, from + 99_999));
        }
        System.out.printf(Locale.ROOT, "bulk INSERT of %,d live rows (fence %d): %.1f s%n", n, f0, secs(t0));
        printInnoDb("N live rows", innoDbSize(pool, s, "items", "fence_deleted"), n);

        FenceToken deleteFence = FenceToken.of(mariaTick(pool));
        t0 = System.nanoTime();
        inParallel(pool, threads, n, 1_000, (c, id) -> requireApplied(items.on(c).delete(id, deleteFence), "delete " + id));
        double deleteSecs = secs(t0);
        System.out.printf(Locale.ROOT, "%,d fenced deletes (%d threads, commit every 1,000): %.1f s, %,.0f/s%n", n, threads, deleteSecs, n / deleteSecs);
        printInnoDb("N tombstones", innoDbSize(pool, s, "items", "fence_deleted"), n);

        // The baseline, in the same run on the same tombstones (a copy): the plainest purge one could write, batched
        // DELETEs of tombstones in key order with no horizon, no locking read and no second check. Unsafe beside
        // writes (it removes tombstones of any age); it prices what the rule's statements cost. "= TRUE", not a bare
        // "WHERE fence_deleted": MariaDB reads the bare column as "<> 0", a range it then sorts (EXPLAIN: Using filesort).
        exec(pool, "CREATE TABLE " + s + ".items_plain LIKE " + t);
        exec(pool, "INSERT INTO " + s + ".items_plain SELECT * FROM " + t);
        awaitPurgeable(() -> mariaTick(pool), deleteFence.value());
        t0 = System.nanoTime();
        long plain = 0;
        int removed;
        do {
            removed = update(pool, "DELETE FROM " + s + ".items_plain WHERE fence_deleted = TRUE ORDER BY id LIMIT 10000");
            plain += removed;
        } while (removed > 0);
        double plainSecs = secs(t0);
        double plainRate = plain / plainSecs;
        System.out.printf(Locale.ROOT, "baseline, plain DELETE .. WHERE fence_deleted = TRUE ORDER BY id LIMIT 10000 (autocommit) on a copy: removed %,d "
                + "in %.1f s, %,.0f rows/s%n", plain, plainSecs, plainRate);
        double rate = purgeAndOptimize(pool, s, "items", "fence_deleted", n, () -> items.on(pool).purge(bigBatches()));
        System.out.printf(Locale.ROOT, "purge / baseline: %.2fx%n", rate / plainRate);
    }

    /**
     * Purges, then reports the sizes as the purge leaves them, once InnoDB's own purge has caught up, and after
     * OPTIMIZE TABLE; returns the purge's rows/s.
     */
    private static double purgeAndOptimize(HikariDataSource pool, String s, String table, String removable, int n, Supplier<PurgeResult> purge)
            throws Exception {
        long t0 = System.nanoTime();
        PurgeResult r = purge.get();
        double purgeSecs = secs(t0);
        System.out.printf(Locale.ROOT, "purge: removed %,d in %d batches of up to 10,000, complete=%s: %.1f s, %,.0f rows/s%n",
                r.removed(), r.batches(), r.complete(), purgeSecs, r.removed() / purgeSecs);
        printInnoDb("after the purge", innoDbSize(pool, s, table, removable), n);
        awaitHistoryPurged(pool);
        printInnoDb("after InnoDB's own purge", innoDbSize(pool, s, table, removable), n);
        t0 = System.nanoTime();
        exec(pool, "OPTIMIZE TABLE " + s + "." + table);
        System.out.printf(Locale.ROOT, "OPTIMIZE TABLE (InnoDB: a rebuild, then ANALYZE): %.1f s%n", secs(t0));
        printInnoDb("after OPTIMIZE TABLE", innoDbSize(pool, s, table, removable), n);
        return r.removed() / purgeSecs;
    }

    /** A table as docs/mysql-mariadb.md shows, with the tombstone index the purge wants, fenced with the horizon. */
    private static FencedTable mariaResourceTable(HikariDataSource pool, String s, String name) throws Exception {
        exec(pool, "CREATE TABLE " + s + "." + name + " (id BIGINT PRIMARY KEY, body TEXT, fence_token BIGINT NOT NULL DEFAULT 0, "
                + "fence_deleted BOOLEAN NOT NULL DEFAULT FALSE) ENGINE=InnoDB");
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            for (String sql : TombstoneIndex.on(FenceColumn.on(s, name).withTombstoneColumn("fence_deleted"), "id").mysqlStatements()) {
                st.execute(sql);
            }
        }
        return FencedTable.builder(s, name, "id", "fence_token").withKeyType(Long.class).withTombstoneColumn("fence_deleted")
                .withHorizon(H).withClockMargin(M).withMetrics(LockMetrics.none()).build();
    }

    private static void mariaChurn(HikariDataSource pool, String s, int rounds, int keys, int threads) throws Exception {
        churn(new MariaSql(pool, s), List.of("churn_none", "churn_purge"), 1, "churn_none (no purge), churn_purge (purge every second); nothing "
                + "else runs on them (InnoDB's own purge removes what the deletes left)", () -> {}, rounds, keys, threads);
        System.out.printf(Locale.ROOT, "history list length at the end: %d; load %s%n", historyLength(pool), load());
    }

    /**
     * An InnoDB table's rows (counted) and tombstones, and after {@code ANALYZE TABLE}: {@code DATA_LENGTH} (the
     * clustered index, rows included), {@code INDEX_LENGTH} (secondary indexes), {@code DATA_FREE} (free extents in
     * its tablespace), and the tablespace file's allocated size.
     */
    record InnoDbSize(long rows, long removable, long data, long index, long free, long file, long history) {}

    private static InnoDbSize innoDbSize(HikariDataSource pool, String s, String table, String removable) throws Exception {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.execute("ANALYZE TABLE " + s + "." + table);
            long rows;
            long removableRows;
            try (ResultSet rs = st.executeQuery("SELECT count(*), coalesce(sum(" + removable + "), 0) FROM " + s + "." + table)) {
                rs.next();
                rows = rs.getLong(1);
                removableRows = rs.getLong(2);
            }
            try (ResultSet rs = st.executeQuery("SELECT t.DATA_LENGTH, t.INDEX_LENGTH, t.DATA_FREE, f.ALLOCATED_SIZE FROM information_schema.TABLES t "
                    + "JOIN information_schema.INNODB_SYS_TABLESPACES f ON f.NAME = CONCAT(t.TABLE_SCHEMA, '/', t.TABLE_NAME) "
                    + "WHERE t.TABLE_SCHEMA = '" + s + "' AND t.TABLE_NAME = '" + table + "'")) {
                rs.next();
                return new InnoDbSize(rows, removableRows, rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), historyLength(pool));
            }
        }
    }

    private static void printInnoDb(String label, InnoDbSize z, long n) {
        System.out.printf(Locale.ROOT, "  %-26s rows %,10d (removable %,10d)  data %7.1f MB  indexes %7.1f MB  data+index %7.1f MB (%4.0f B per key of N)"
                + "  free %7.1f MB  file %7.1f MB  history %,d%n", label, z.rows, z.removable, z.data / 1e6, z.index / 1e6, (z.data + z.index) / 1e6,
                (double) (z.data + z.index) / n, z.free / 1e6, z.file / 1e6, z.history);
    }

    /** {@code tick(now)} by the MariaDB server's clock (UTC, microseconds), as ClockFloor computes it. */
    private static long mariaTick(HikariDataSource pool) throws Exception {
        return Long.parseLong(one(pool, "SELECT (TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', UTC_TIMESTAMP(6)) - "
                + ClockFloor.EPOCH_MILLIS * 1000 + ") DIV " + ClockFloor.MICROS_PER_FENCE));
    }

    /**
     * InnoDB's history list length: undo records of committed changes its purge threads have not processed yet;
     * a deleted row's record leaves its page only when they have. Server-wide (other databases' work counts).
     */
    private static long historyLength(HikariDataSource pool) throws Exception {
        String status = one(pool, "SHOW ENGINE INNODB STATUS", 3);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("History list length (\\d+)").matcher(status);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    /** Waits (polling, at most 3 minutes) until InnoDB's history list is below 1,000: its own purge has caught up. */
    private static void awaitHistoryPurged(HikariDataSource pool) throws Exception {
        long t0 = System.nanoTime();
        long h;
        while ((h = historyLength(pool)) >= 1_000 && System.nanoTime() - t0 < Duration.ofMinutes(3).toNanos()) {
            Thread.sleep(500);
        }
        System.out.printf(Locale.ROOT, "waited %.1f s for InnoDB's history list to fall below 1,000 (now %,d)%n", secs(t0), h);
    }

    // --- helpers ---------------------------------------------------------------------------------------------

    interface KeyOp {
        void run(Connection c, long key) throws Exception;
    }

    interface ThreadOp {
        void run(int thread) throws Exception;
    }

    /**
     * Runs {@code op} for keys 1..n on {@code threads} threads, each on a connection of {@code pool} of its
     * own, committing every {@code perTx} keys.
     */
    private static void inParallel(HikariDataSource pool, int threads, long n, int perTx, KeyOp op) throws Exception {
        onThreads(threads, thread -> {
            try (Connection c = pool.getConnection()) {
                c.setAutoCommit(false);
                int inTx = 0;
                for (long k = 1 + thread; k <= n; k += threads) {
                    op.run(c, k);
                    if (++inTx == perTx) {
                        c.commit();
                        inTx = 0;
                    }
                }
                c.commit();
            }
        });
    }

    /** Runs {@code op} on {@code threads} platform threads at once and fails with the first failure. */
    private static void onThreads(int threads, ThreadOp op) throws Exception {
        List<Thread> workers = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    op.run(thread);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread w : workers) {
            w.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("a worker failed", failure.get());
        }
    }

    record Size(long rows, long removable, long heap, long indexes, long total) {}

    private static Size size(HikariDataSource pool, String table, String removable) throws Exception {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*), count(*) FILTER (WHERE " + removable + "), pg_relation_size('" + table + "'), "
                        + "pg_indexes_size('" + table + "'), pg_total_relation_size('" + table + "') FROM " + table)) {
            rs.next();
            return new Size(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5));
        }
    }

    private static void print(String label, Size z, long n) {
        System.out.printf(Locale.ROOT, "  %-30s rows %,10d (removable %,10d)  heap %8.1f MB  indexes %8.1f MB  total %8.1f MB  (%5.0f B per key of N)%n",
                label, z.rows, z.removable, z.heap / 1e6, z.indexes / 1e6, z.total / 1e6, (double) z.total / n);
    }

    private static long dbTick(HikariDataSource pool) throws Exception {
        return Long.parseLong(one(pool, "SELECT floor((extract(epoch from clock_timestamp()) * 1000000 - " + ClockFloor.EPOCH_MILLIS * 1000
                + ") / " + ClockFloor.MICROS_PER_FENCE + ")::bigint"));
    }

    private static String one(HikariDataSource pool, String sql) throws Exception {
        return one(pool, sql, 1);
    }

    private static String one(HikariDataSource pool, String sql, int column) throws Exception {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(column);
        }
    }

    private static int update(HikariDataSource pool, String sql) throws Exception {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            return st.executeUpdate(sql);
        }
    }

    private static void exec(HikariDataSource pool, String sql) throws Exception {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    static void requireApplied(WriteOutcome outcome, String what) {
        if (!outcome.isApplied()) {
            throw new IllegalStateException(what + ": " + outcome);
        }
    }

    static double secs(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }

    /** The 1, 5 and 15 minute load averages. */
    static String load() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (Exception e) {
            return "?";
        }
    }
}
