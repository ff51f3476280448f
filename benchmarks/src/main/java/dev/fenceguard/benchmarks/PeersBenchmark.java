package dev.fenceguard.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.TestPostgres;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;
import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * fence-guard beside the lock libraries a user would compare it with (issue #14), in one run, on the same
 * server, threads and keys: acquire + release pairs per second, latency, client CPU per pair, and for
 * Redis the server commands per pair ({@code INFO commandstats}, commands run inside scripts included).
 *
 * <p>Redis: a raw Lettuce lock ({@code SET NX PX} + compare-and-delete script: the floor), the minimal
 * fenced lock script (issue #31: {@link #MINIMAL_FENCED_ACQUIRE} + the same compare-and-delete; always run,
 * whatever the peer filter, and fence-guard's rows are also given as a ratio of it), fence-guard's
 * {@link LockClient}, Spring Integration's {@code RedisLockRegistry}, ShedLock's {@code RedisLockProvider},
 * Redisson's {@code RFencedLock} and {@code RLock}. PostgreSQL: {@code pg_try_advisory_lock} +
 * {@code pg_advisory_unlock} on one pooled connection (the floor), the same fenced lock written by hand as
 * one statement each way (issue #31: durable, the reference of fence-guard's {@code DENSE} row, and with
 * {@code synchronous_commit = off}, the reference of its {@code CLOCK_FLOORED} row; always run), fence-guard's {@link LockClient},
 * Spring Integration's {@code JdbcLockRegistry}, ShedLock's {@code JdbcTemplateLockProvider}; all on one
 * HikariCP pool as large as the most threads. Every peer is used as its documentation shows, with a
 * 30 s lease and no wait; each thread cycles over 250 keys of its own, so no pair contends.
 *
 * <p>Each thread count runs all peers of a store in turn, {@code rounds} times after one warm-up pass,
 * and reports every round and each peer's median. Arguments:
 * {@code [seconds-per-phase=3] [rounds=3] [threads=1,8] [stores=redis,postgres] [scale=false] [peers=all]};
 * {@code scale=true} adds the 1e3 vs 1e6 keys latency and the memory per idle key (Redis) and row
 * (PostgreSQL); {@code peers}, if given, keeps the floor and the peers whose name contains it (for a
 * profile of one of them). Servers: {@link TestRedis#server()}, {@link TestPostgres#server()}.
 */
public final class PeersBenchmark {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static String only = "";
    private static final int KEYS_PER_THREAD = 250;
    static final String COMPARE_AND_DELETE =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
    /**
     * The cheapest correct fenced lock written by hand (issue #31's floor for fence-guard's pair): take the
     * lock with {@code SET NX PX} and, only if that took it, bump the fence counter, in one script so that
     * the two cannot part. KEYS[1] lock, KEYS[2] counter (one hash tag); ARGV[1] lock id, ARGV[2] ttl ms.
     * Returns the fence, or 0 when held. A dense counter with no clock floor and no expiry: a counter lost
     * with the data starts again from 1, which fence-guard's scripts exist to prevent.
     */
    static final String MINIMAL_FENCED_ACQUIRE =
            "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return 0";
    /** PostgreSQL: the reference of the {@code DENSE} row (issue #31). */
    static final String HAND_DURABLE = "hand-written fenced pair (durable)";
    /** PostgreSQL: the reference of the {@code CLOCK_FLOORED} row (issue #31). */
    static final String HAND_UNFLUSHED = "hand-written fenced pair, synchronous_commit off";
    /** The row every Redis ratio of issue #31 is taken against. */
    static final String MINIMAL = "minimal fenced lock script";

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int[] threads = Arrays.stream((args.length > 2 ? args[2] : "1,8").split(",")).mapToInt(Integer::parseInt).toArray();
        List<String> stores = List.of((args.length > 3 ? args[3] : "redis,postgres").split(","));
        boolean scale = args.length > 4 && Boolean.parseBoolean(args[4]);
        only = args.length > 5 ? args[5] : "";
        System.out.printf(Locale.ROOT, "%.1f s per phase, %d rounds after a warm-up pass, threads %s, %d cores%n",
                seconds, rounds, Arrays.toString(threads), Runtime.getRuntime().availableProcessors());
        if (stores.contains("redis")) {
            redis(seconds, rounds, threads, scale);
        }
        if (stores.contains("postgres")) {
            postgres(seconds, rounds, threads, scale);
        }
    }

    private static String key(String base, int thread, long iteration) {
        return base + thread + ":" + (iteration % KEYS_PER_THREAD);
    }

    private static void redis(double seconds, int rounds, int[] threads, boolean scale) throws Exception {
        TestRedis server = TestRedis.server();
        String prefix = TestRedis.keyPrefix("peers");
        URI uri = server.uri();
        RedisClient client = RedisClient.create(RedisURI.create(uri));
        LettuceConnectionFactory spring = new LettuceConnectionFactory(new RedisStandaloneConfiguration(uri.getHost(), uri.getPort()));
        spring.afterPropertiesSet();
        spring.start();
        Config config = new Config();
        config.useSingleServer().setAddress("redis://" + uri.getHost() + ":" + uri.getPort());
        RedissonClient redisson = Redisson.create(config);
        try (StatefulRedisConnection<String, String> conn = client.connect();
                FenceGuardRedis fenceGuard = FenceGuardRedis.builder(conn).withKeyPrefix(prefix + "fg:").build()) {
            RedisCommands<String, String> redis = conn.sync();
            System.out.printf("%nRedis %s (%s); Lettuce, Spring and fence-guard share one Lettuce connection each "
                    + "(the raw lock and fence-guard the same one); Redisson %s with its default pool%n",
                    info(redis, "server", "redis_version"), server.origin(), Redisson.class.getPackage().getImplementationVersion());
            LockClient locks = LockClient.of(fenceGuard.lockBackend());
            String sha = redis.scriptLoad(COMPARE_AND_DELETE);
            String minimalSha = redis.scriptLoad(MINIMAL_FENCED_ACQUIRE);
            String ttlMillis = Long.toString(TTL.toMillis());
            SetArgs nxpx = SetArgs.Builder.nx().px(TTL.toMillis());
            RedisLockRegistry registry = new RedisLockRegistry(spring, prefix + "spring", TTL);
            LockProvider shedlock = new RedisLockProvider(spring, "bench", prefix + "shedlock");

            Map<String, Harness.Op> peers = new LinkedHashMap<>();
            peers.put("raw Lettuce lock (floor)", (t, i) -> {
                String key = key(prefix + "raw:", t, i);
                String id = LockId.random().value();
                if (!"OK".equals(redis.set(key, id, nxpx))) {
                    throw new IllegalStateException("SET NX failed");
                }
                if (redis.<Long>evalsha(sha, ScriptOutputType.INTEGER, new String[] {key}, id) != 1) {
                    throw new IllegalStateException("compare-and-delete failed");
                }
            });
            peers.put(MINIMAL, (t, i) -> {
                String tag = "{" + key(prefix + "minimal:", t, i) + "}";
                String[] keys = {tag + ":lock", tag + ":fence"};
                String id = LockId.random().value();
                if (redis.<Long>evalsha(minimalSha, ScriptOutputType.INTEGER, keys, id, ttlMillis) < 1) {
                    throw new IllegalStateException("minimal fenced acquire found the lock held");
                }
                if (redis.<Long>evalsha(sha, ScriptOutputType.INTEGER, new String[] {keys[0]}, id) != 1) {
                    throw new IllegalStateException("compare-and-delete failed");
                }
            });
            peers.put("fence-guard LockClient", (t, i) -> release(locks, locks.tryAcquire(key("", t, i), TTL)));
            // Diagnostic: the backend alone (the SPI, waited on), to tell the client's cost from the scripts'.
            BlockingBackend backend = BlockingBackend.of(fenceGuard.lockBackend());
            peers.put("fence-guard backend alone (diagnostic)", (t, i) -> {
                LockKey key = LockKey.of(key("", t, i));
                LockId id = LockId.random();
                backend.tryAcquire(key, id, TTL).orElseThrow(() -> new IllegalStateException("not acquired"));
                if (!backend.release(key, id)) {
                    throw new IllegalStateException("release failed");
                }
            });
            peers.put("Spring RedisLockRegistry", (t, i) -> tryLockUnlock(registry.obtain(key("", t, i))));
            peers.put("ShedLock RedisLockProvider", (t, i) -> shedlock.lock(new LockConfiguration(Instant.now(), key("", t, i), TTL,
                    Duration.ZERO)).orElseThrow(() -> new IllegalStateException("not locked")).unlock());
            peers.put("Redisson RFencedLock", (t, i) -> {
                RFencedLock lock = redisson.getFencedLock(key(prefix + "redisson-fenced:", t, i));
                if (lock.tryLockAndGetToken(0, TTL.toMillis(), TimeUnit.MILLISECONDS) == null) {
                    throw new IllegalStateException("not locked");
                }
                lock.unlock();
            });
            peers.put("Redisson RLock", (t, i) -> {
                RLock lock = redisson.getLock(key(prefix + "redisson:", t, i));
                if (!lock.tryLock(0, TTL.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("not locked");
                }
                lock.unlock();
            });

            Map<String, Double> commands = new LinkedHashMap<>();
            for (Map.Entry<String, Harness.Op> peer : peers.entrySet()) {
                if (commands.isEmpty() || peer.getKey().contains(only) || peer.getKey().equals(MINIMAL)) {
                    commands.put(peer.getKey(), commandsPerOp(redis, peer.getValue()));
                }
            }
            for (int n : threads) {
                run("Redis", n, seconds, rounds, peers, commands);
            }
            if (scale) {
                redisScale(redis, fenceGuard, locks, prefix, seconds, rounds);
            }
            registry.destroy();
            RedisBenchmark.deleteAll(redis, prefix);
        } finally {
            redisson.shutdown();
            spring.destroy();
            client.shutdown();
        }
    }

    /**
     * Redis commands per operation: the growth of the server's command counts (every command, those run
     * by scripts included, less the INFO calls that read them) over 500 operations on one thread. The
     * server is shared, so this takes the least of three samples: other clients only ever add.
     */
    private static double commandsPerOp(RedisCommands<String, String> redis, Harness.Op op) throws Exception {
        int ops = 500;
        double least = Double.MAX_VALUE;
        for (int sample = 0; sample < 3; sample++) {
            long before = commandCount(redis);
            for (int i = 0; i < ops; i++) {
                op.run(0, i);
            }
            long after = commandCount(redis);
            least = Math.min(least, (after - before - 1) / (double) ops); // the first INFO is counted by the second
        }
        return least;
    }

    private static long commandCount(RedisCommands<String, String> redis) {
        return redis.info("commandstats").lines().filter(l -> l.startsWith("cmdstat_") && !l.startsWith("cmdstat_info:"))
                .mapToLong(l -> Long.parseLong(l.substring(l.indexOf("calls=") + 6, l.indexOf(',', l.indexOf("calls=")))))
                .sum();
    }

    private static void redisScale(RedisCommands<String, String> redis, FenceGuardRedis fenceGuard, LockClient locks, String prefix,
            double seconds, int rounds) throws Exception {
        // Idle keys as fence-guard leaves them after a release, written directly: a million real pairs
        // would take minutes here and leave the same thing behind.
        int large = 1_000_000;
        long memoryBefore = usedMemory(redis);
        String sample = fenceGuard.lockBackend().fenceKeyOf("scale:0");
        locks.tryAcquire("scale:0", TTL).ifPresent(locks::release);
        String idle = redis.get(sample);
        for (int from = 0; from < large; from += 10_000) {
            Map<String, String> batch = new LinkedHashMap<>();
            for (int k = from; k < from + 10_000; k++) {
                batch.put(fenceGuard.lockBackend().fenceKeyOf("scale:" + k), idle);
            }
            redis.mset(batch);
        }
        long memoryAfter = usedMemory(redis);
        System.out.printf(Locale.ROOT, "%nRedis memory per idle lock key ('scale:<n>', fence-guard prefix %d chars): MEMORY USAGE %d bytes; "
                + "used_memory grew %.0f bytes per key over %,d keys%n", (prefix + "fg:").length(), redis.memoryUsage(sample),
                (memoryAfter - memoryBefore) / (double) large, large);
        Map<String, Harness.Op> sizes = new LinkedHashMap<>();
        sizes.put("fence-guard, 1e6 keys", (t, i) -> release(locks, locks.tryAcquire("scale:" + ThreadLocalRandom.current().nextInt(large), TTL)));
        sizes.put("fence-guard, 1e3 keys", (t, i) -> release(locks, locks.tryAcquire("scale:" + ThreadLocalRandom.current().nextInt(1_000), TTL)));
        run("Redis scale", 1, seconds, rounds, sizes, Map.of());
    }

    private static long usedMemory(RedisCommands<String, String> redis) {
        return Long.parseLong(info(redis, "memory", "used_memory"));
    }

    private static String info(RedisCommands<String, String> redis, String section, String field) {
        return redis.info(section).lines().filter(l -> l.startsWith(field + ":")).findFirst().orElse("?:?").split(":", 2)[1].trim();
    }

    private static void postgres(double seconds, int rounds, int[] threads, boolean scale) throws Exception {
        TestPostgres server = TestPostgres.server();
        try (TestPostgres.Schema schema = server.newSchema("peers")) {
            int poolSize = Arrays.stream(threads).max().orElseThrow();
            try (HikariDataSource pool = Harness.pool(schema.dataSource(), poolSize);
                    // The hand-written unflushed pair's own pool: the setting costs it nothing per statement.
                    HikariDataSource unflushed = Harness.pool(schema.dataSource(), poolSize, "SET synchronous_commit = off")) {
                String s = schema.name();
                System.out.printf("%nPostgreSQL %s (%s), one HikariCP pool of %d%n", server.version(), server.origin(), pool.getMaximumPoolSize());
                FenceGuardMigrations.builder(pool).withSchema(s).migrate();
                LockClient locks = LockClient.of(FenceGuardJdbc.builder(pool).withSchema(s).build().lockBackend());
                FenceGuardMigrations.builder(pool).withSchema(s).withTable("locks_floored").migrate();
                LockClient floored = LockClient.of(FenceGuardJdbc.builder(pool).withSchema(s).withLockTable("locks_floored")
                        .withFenceStrategy(FenceStrategy.CLOCK_FLOORED).build().lockBackend());
                schema.execute("CREATE TABLE " + s + ".int_lock (lock_key CHAR(36) NOT NULL, region VARCHAR(100) NOT NULL, "
                        + "client_id CHAR(36), created_date TIMESTAMP NOT NULL, expired_after TIMESTAMP NOT NULL, "
                        + "CONSTRAINT int_lock_pk PRIMARY KEY (lock_key, region))");
                DefaultLockRepository repository = new DefaultLockRepository(pool);
                repository.setPrefix(s + ".INT_");
                repository.setTransactionManager(new DataSourceTransactionManager(pool));
                repository.afterPropertiesSet();
                repository.afterSingletonsInstantiated();
                JdbcLockRegistry registry = new JdbcLockRegistry(repository, TTL);
                schema.execute("CREATE TABLE " + s + ".shedlock (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL, "
                        + "locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))");
                LockProvider shedlock = new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                        .withJdbcTemplate(new JdbcTemplate(pool)).withTableName(s + ".shedlock").usingDbTime().build());
                // Advisory locks are database-wide: a random range keeps clear of other sessions' keys.
                long base = ThreadLocalRandom.current().nextLong(1L << 40, 1L << 60);

                Map<String, Harness.Op> peers = new LinkedHashMap<>();
                peers.put("advisory lock pair (floor)", (t, i) -> {
                    long key = base + t * KEYS_PER_THREAD + i % KEYS_PER_THREAD;
                    try (Connection c = pool.getConnection();
                            PreparedStatement lock = c.prepareStatement("SELECT pg_try_advisory_lock(?)");
                            PreparedStatement unlock = c.prepareStatement("SELECT pg_advisory_unlock(?)")) {
                        if (!bool(lock, key) || !bool(unlock, key)) {
                            throw new IllegalStateException("advisory lock pair failed");
                        }
                    }
                });
                // Issue #31's floors for fence-guard's two rows: the same fenced lock written by hand as one statement
                // each way, durable (what DENSE needs) and with commits that do not wait for the WAL flush (what
                // CLOCK_FLOORED does). Every pair on one pooled connection, as the advisory pair.
                for (String table : List.of("hand_durable", "hand_unflushed")) {
                    schema.execute("CREATE TABLE " + s + "." + table + " (k TEXT PRIMARY KEY, fence BIGINT NOT NULL, owner UUID, "
                            + "until TIMESTAMPTZ)");
                }
                peers.put(HAND_DURABLE, (t, i) -> handPair(pool, s + ".hand_durable", key("", t, i)));
                peers.put(HAND_UNFLUSHED, (t, i) -> handPair(unflushed, s + ".hand_unflushed", key("", t, i)));
                peers.put("fence-guard LockClient", (t, i) -> release(locks, locks.tryAcquire(key("", t, i), TTL)));
                peers.put("fence-guard LockClient, CLOCK_FLOORED", (t, i) -> release(floored, floored.tryAcquire(key("", t, i), TTL)));
                peers.put("Spring JdbcLockRegistry", (t, i) -> tryLockUnlock(registry.obtain(key("", t, i))));
                peers.put("ShedLock JdbcTemplateLockProvider", (t, i) -> shedlock.lock(new LockConfiguration(Instant.now(),
                        key("", t, i), TTL, Duration.ZERO)).orElseThrow(() -> new IllegalStateException("not locked")).unlock());
                for (int n : threads) {
                    run("PostgreSQL", n, seconds, rounds, peers, Map.of());
                }
                if (scale) {
                    postgresScale(schema, pool, s);
                }
                repository.close();
            }
        }
    }

    /** Bytes per lock row (heap, indexes, TOAST) at a million idle rows, as fence-guard leaves them. */
    private static void postgresScale(TestPostgres.Schema schema, HikariDataSource pool, String s) throws Exception {
        FenceGuardMigrations.builder(pool).withSchema(s).withTable("locks_large").migrate();
        schema.execute("INSERT INTO " + s + ".locks_large (lock_key, fence) SELECT 'scale:' || g, 1700000000000 + g "
                + "FROM generate_series(1, 1000000) g");
        schema.execute("VACUUM ANALYZE " + s + ".locks_large");
        List<String> r = schema.query("SELECT pg_total_relation_size('" + s + ".locks_large') || ' ' || pg_relation_size('" + s
                + ".locks_large') || ' ' || count(*) FROM " + s + ".locks_large");
        long[] v = Arrays.stream(r.getFirst().split(" ")).mapToLong(Long::parseLong).toArray();
        System.out.printf(Locale.ROOT, "%nPostgreSQL bytes per idle lock row ('scale:<n>', 1e6 rows): %.0f with the primary key index "
                + "(pg_total_relation_size), %.0f for the heap alone (pg_relation_size)%n", v[0] / (double) v[2], v[1] / (double) v[2]);
    }

    /**
     * The cheapest correct fenced lock pair written by hand: a grant that raises the key's fence in the same
     * statement ({@code INSERT .. ON CONFLICT DO UPDATE .. WHERE free RETURNING fence}), and a release that frees
     * the row only for its holder; each statement its own commit (auto-commit), on one pooled connection.
     */
    private static void handPair(HikariDataSource pool, String table, String key) throws Exception {
        UUID owner = UUID.randomUUID();
        try (Connection c = pool.getConnection();
                PreparedStatement grant = c.prepareStatement("INSERT INTO " + table + " AS l (k, fence, owner, until) "
                        + "VALUES (?, 1, ?, clock_timestamp() + interval '30 seconds') ON CONFLICT (k) DO UPDATE SET fence = l.fence + 1, "
                        + "owner = EXCLUDED.owner, until = EXCLUDED.until WHERE l.owner IS NULL OR l.until <= clock_timestamp() "
                        + "RETURNING fence");
                PreparedStatement free = c.prepareStatement("UPDATE " + table + " SET owner = NULL, until = NULL "
                        + "WHERE k = ? AND owner = ? AND until > clock_timestamp()")) {
            grant.setString(1, key);
            grant.setObject(2, owner);
            try (ResultSet rs = grant.executeQuery()) {
                if (!rs.next() || rs.getLong(1) < 1) {
                    throw new IllegalStateException("hand-written grant refused");
                }
            }
            free.setString(1, key);
            free.setObject(2, owner);
            if (free.executeUpdate() != 1) {
                throw new IllegalStateException("hand-written release refused");
            }
        }
    }

    private static boolean bool(PreparedStatement statement, long key) throws Exception {
        statement.setLong(1, key);
        try (ResultSet rs = statement.executeQuery()) {
            return rs.next() && rs.getBoolean(1);
        }
    }

    private static void release(LockClient locks, java.util.Optional<Lease> lease) {
        if (!locks.release(lease.orElseThrow(() -> new IllegalStateException("not acquired")))) {
            throw new IllegalStateException("release failed");
        }
    }

    private static void tryLockUnlock(Lock lock) {
        if (!lock.tryLock()) {
            throw new IllegalStateException("not locked");
        }
        lock.unlock();
    }

    /** One warm-up pass, then {@code rounds} rounds of every peer in turn; prints every round and the medians. */
    private static void run(String store, int threads, double seconds, int rounds, Map<String, Harness.Op> peers,
            Map<String, Double> commands) throws Exception {
        Harness h = new Harness(threads, seconds);
        Map<String, Harness.Op> chosen = new LinkedHashMap<>();
        peers.forEach((name, op) -> {
            if (chosen.isEmpty() || name.contains(only) || name.equals(MINIMAL) || name.startsWith("hand-written")) {
                chosen.put(name, op);
            }
        });
        peers = chosen;
        List<Harness.Op> ops = new ArrayList<>(peers.values());
        for (Harness.Op op : ops) {
            h.measure(op);
        }
        List<List<Harness.Phase>> phases = h.compare(rounds, ops);
        List<String> names = new ArrayList<>(peers.keySet());
        System.out.printf(Locale.ROOT, "%n%s, %d thread(s): pairs/s of each round%n", store, threads);
        for (int p = 0; p < names.size(); p++) {
            System.out.printf(Locale.ROOT, "  %-34s %s%n", names.get(p),
                    phases.get(p).stream().map(x -> String.format(Locale.ROOT, "%,.0f", x.opsPerSecond())).toList());
        }
        Harness.Phase floor = Harness.median(phases.getFirst());
        System.out.printf(Locale.ROOT, "%s, %d thread(s), median round: | peer | pairs/s | vs %s | p50 us | p99 us | CPU us/pair |%s%n",
                store, threads, names.getFirst(), commands.isEmpty() ? "" : " commands/pair |");
        for (int p = 0; p < names.size(); p++) {
            Harness.Phase m = Harness.median(phases.get(p));
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %.2fx | %d | %d | %.1f |%s%n", names.get(p), m.opsPerSecond(),
                    m.opsPerSecond() / floor.opsPerSecond(), m.p50Micros(), m.p99Micros(), m.cpuMicrosPerOp(),
                    commands.isEmpty() ? "" : String.format(Locale.ROOT, " %.2f |", commands.get(names.get(p))));
        }
        // Issue #31's ratios, round by round as well as of the medians, so that their spread shows.
        for (int p = 0; p < names.size(); p++) {
            String name = names.get(p);
            String against = !name.startsWith("fence-guard") ? null
                    : names.contains(MINIMAL) ? MINIMAL
                    : name.contains("CLOCK_FLOORED") ? HAND_UNFLUSHED : HAND_DURABLE;
            int reference = against == null ? -1 : names.indexOf(against);
            if (reference >= 0) {
                List<Harness.Phase> ours = phases.get(p);
                List<Harness.Phase> theirs = phases.get(reference);
                List<String> perRound = new ArrayList<>();
                for (int r = 0; r < ours.size(); r++) {
                    perRound.add(String.format(Locale.ROOT, "%.2fx", ours.get(r).opsPerSecond() / theirs.get(r).opsPerSecond()));
                }
                System.out.printf(Locale.ROOT, "%s, %d thread(s): %s vs %s: %.2fx of the medians; rounds %s%n", store, threads,
                        name, against, Harness.median(ours).opsPerSecond() / Harness.median(theirs).opsPerSecond(), perRound);
            }
        }
    }
}
