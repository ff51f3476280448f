package dev.fenceguard.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.AsyncLockClient;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.jooq.FencedWriter;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.redis.AsyncFencedRedis;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.redis.FencedRedis;
import dev.fenceguard.testkit.servers.TestPostgres;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Bytes allocated per operation (issue #31): a lock pair (acquire + release) and a fenced write through
 * fence-guard's blocking and asynchronous faces, beside the minimal client code that does the same by
 * hand, in the same run, on the same connection or pool.
 *
 * <p>One caller thread runs the operations one after another (an asynchronous one is waited on before
 * the next starts), so that every byte allocated in the JVM while a phase runs is the operations' doing:
 * the caller's, fence-guard's timer thread's, the drivers' threads' (Lettuce's event loop; the carrier
 * threads of the virtual threads the JDBC backends run calls on) and those of threads that ended during
 * the phase. The figure is the growth of {@code com.sun.management.ThreadMXBean.getTotalThreadAllocatedBytes()}
 * (every thread, terminated ones included) over the phase, divided by the operations; each live thread's
 * growth ({@code getThreadAllocatedBytes}) is added up by thread kind to say who allocated, and what the live
 * threads do not account for is shown as "ended" (threads that ended during the phase). The loop itself
 * allocates nothing of its own: fence-guard's keys, values and fences are built before the phase, and the
 * minimal rows make only what their client code must (the Redis keys of a name, the lock id).
 *
 * <p>Each row runs {@code ops} operations once to warm up (JIT), then {@code rounds} rounds of {@code ops},
 * rows interleaved round by round; the report gives each row's median bytes per operation, its spread
 * (min .. max), the split by thread kind of the median round, and operations per second (one caller,
 * one operation at a time: latency-bound, a check that the rows did the same work, not a throughput figure).
 *
 * <p>Redis: plain Lettuce {@code SET}; the minimal fenced lock script pair ({@link PeersBenchmark#MINIMAL_FENCED_ACQUIRE}
 * + compare-and-delete, as in the peers benchmark) on Lettuce's blocking and asynchronous faces; the minimal
 * fenced-set script ({@link #MINIMAL_FENCED_SET}); fence-guard's {@link LockClient} and {@link AsyncLockClient}
 * pairs and {@link FencedRedis#set} / {@link AsyncFencedRedis#set}. PostgreSQL: a hand-written JDBC lock pair
 * (two primary-key {@code UPDATE}s: a grant that bumps the fence and returns it, a release that checks the
 * lock id) and a hand-written fenced {@code UPDATE} (one statement, fence compared in its {@code WHERE}), each
 * statement on a pooled connection of its own as fence-guard's calls are; fence-guard's lock pairs (default
 * {@code DENSE} table; and, as a diagnostic, on two platform threads in place of a virtual thread per call) and
 * {@link FencedWriter#update}, with one {@link Assignments} kept for every call and with one made per call (as
 * code that builds its values per request does). fence-guard's clients run with
 * {@link LockMetrics#none()}; the rows marked "default metrics" use what {@link LockClient#of} picks (Micrometer's
 * global registry, as Micrometer is on this class path).
 *
 * <p>Arguments: {@code [ops=20000] [rounds=5] [stores=redis,postgres]}; {@code -Dalloc.only=<text>[,<text>..]} keeps
 * the rows whose name contains one of the texts (for a JFR recording of one row, or the rows one change concerns). Servers: {@link TestRedis#server()},
 * {@link TestPostgres#server()}.
 */
public final class AllocationBenchmark {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final int KEYS = 250;
    private static final FenceToken FENCE = FenceToken.of(7);
    /**
     * The cheapest fenced {@code SET} written by hand: compare the stored fence, then write the value and
     * the fence. KEYS[1] value, KEYS[2] fence; ARGV[1] value, ARGV[2] fence. Returns 1 if written, 0 if stale.
     */
    static final String MINIMAL_FENCED_SET = "local s = tonumber(redis.call('GET', KEYS[2]) or '0') "
            + "if tonumber(ARGV[2]) < s then return 0 end redis.call('SET', KEYS[1], ARGV[1]) redis.call('SET', KEYS[2], ARGV[2]) return 1";

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** One operation; {@code i} picks its key. */
    private interface Op {
        void run(int i) throws Exception;
    }

    /** One phase of one row. */
    private record Phase(double bytesPerOp, double opsPerSecond, Map<String, Double> byKind) {}

    private AllocationBenchmark() {}

    public static void main(String[] args) throws Exception {
        int ops = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        List<String> stores = List.of((args.length > 2 ? args[2] : "redis,postgres").split(","));
        if (!THREADS.isThreadAllocatedMemorySupported()) {
            throw new IllegalStateException("this JVM does not measure allocated bytes per thread");
        }
        THREADS.setThreadAllocatedMemoryEnabled(true);
        System.out.printf(Locale.ROOT, "%,d operations per phase, %d rounds after a warm-up phase, one caller thread, %d cores, %s%n",
                ops, rounds, Runtime.getRuntime().availableProcessors(), Runtime.version());
        if (stores.contains("redis")) {
            redis(ops, rounds);
        }
        if (stores.contains("postgres")) {
            postgres(ops, rounds);
        }
    }

    private static String[] keys(String base) {
        String[] keys = new String[KEYS];
        for (int k = 0; k < KEYS; k++) {
            keys[k] = base + k;
        }
        return keys;
    }

    private static void redis(int ops, int rounds) throws Exception {
        TestRedis server = TestRedis.server();
        String prefix = TestRedis.keyPrefix("alloc");
        RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
        try (StatefulRedisConnection<String, String> conn = client.connect();
                FenceGuardRedis fenceGuard = FenceGuardRedis.builder(conn).withKeyPrefix(prefix + "fg:")
                        .withMetrics(LockMetrics.none()).build()) {
            RedisCommands<String, String> redis = conn.sync();
            RedisAsyncCommands<String, String> async = conn.async();
            System.out.printf(Locale.ROOT, "%nRedis %s (%s), one Lettuce connection shared by every row%n",
                    redis.info("server").lines().filter(l -> l.startsWith("redis_version:")).findFirst().orElse("?:?").split(":")[1],
                    server.origin());
            String cad = redis.scriptLoad(PeersBenchmark.COMPARE_AND_DELETE);
            String minimalLock = redis.scriptLoad(PeersBenchmark.MINIMAL_FENCED_ACQUIRE);
            String minimalSet = redis.scriptLoad(MINIMAL_FENCED_SET);
            String ttlMillis = Long.toString(TTL.toMillis());
            String fence = Long.toString(FENCE.value());
            String[] plainKeys = keys(prefix + "plain:");
            // The minimal rows make their Redis keys from the name per call, as the client code of a lock or a
            // fenced write must (fence-guard's rows do the same inside the library): a hash tag for the lock, a
            // fence key beside the value.
            String[] lockNames = keys(prefix + "minimal:");
            String[] setNames = keys(prefix + "minimal-set:");
            String[] fgKeys = keys("alloc:");
            String[] fgData = keys(prefix + "data:");
            String[] fgAsyncData = keys(prefix + "async-data:");
            LockClient locks = LockClient.builder(fenceGuard.lockBackend()).withMetrics(LockMetrics.none()).build();
            LockClient defaultLocks = LockClient.of(fenceGuard.lockBackend());
            AsyncLockClient asyncLocks = locks.async();
            FencedRedis fenced = fenceGuard.fencedWrites();
            AsyncFencedRedis asyncFenced = fenced.async();

            Map<String, Op> rows = new LinkedHashMap<>();
            rows.put("Lettuce SET (plain, no fence)", i -> redis.set(plainKeys[i % KEYS], "value"));
            rows.put("minimal fenced SET script", i -> {
                String key = setNames[i % KEYS];
                if (redis.<Long>evalsha(minimalSet, ScriptOutputType.INTEGER, new String[] {key, key + ":fence"}, "value", fence) != 1) {
                    throw new IllegalStateException("minimal fenced SET refused");
                }
            });
            rows.put("fence-guard FencedRedis.set", i -> {
                if (!fenced.set(fgData[i % KEYS], FENCE, "value").isApplied()) {
                    throw new IllegalStateException("not applied");
                }
            });
            rows.put("minimal fenced SET script, Lettuce async", i -> {
                String key = setNames[i % KEYS];
                if (async.<Long>evalsha(minimalSet, ScriptOutputType.INTEGER, new String[] {key, key + ":fence"}, "value", fence)
                        .get() != 1) {
                    throw new IllegalStateException("minimal fenced SET refused");
                }
            });
            rows.put("fence-guard AsyncFencedRedis.set", i -> {
                if (!asyncFenced.set(fgAsyncData[i % KEYS], FENCE, "value").toCompletableFuture().join().isApplied()) {
                    throw new IllegalStateException("not applied");
                }
            });
            rows.put("minimal fenced lock script pair", i -> {
                String tag = "{" + lockNames[i % KEYS] + "}";
                String[] keys = {tag + ":lock", tag + ":fence"};
                String id = LockId.random().value();
                if (redis.<Long>evalsha(minimalLock, ScriptOutputType.INTEGER, keys, id, ttlMillis) < 1) {
                    throw new IllegalStateException("minimal fenced acquire found the lock held");
                }
                if (redis.<Long>evalsha(cad, ScriptOutputType.INTEGER, new String[] {keys[0]}, id) != 1) {
                    throw new IllegalStateException("compare-and-delete failed");
                }
            });
            rows.put("fence-guard LockClient pair", i -> release(locks, locks.tryAcquire(fgKeys[i % KEYS], TTL)));
            rows.put("fence-guard LockClient pair, default metrics", i -> release(defaultLocks, defaultLocks.tryAcquire(fgKeys[i % KEYS], TTL)));
            rows.put("minimal fenced lock script pair, Lettuce async", i -> {
                String tag = "{" + lockNames[i % KEYS] + "}";
                String[] keys = {tag + ":lock", tag + ":fence"};
                String id = LockId.random().value();
                if (async.<Long>evalsha(minimalLock, ScriptOutputType.INTEGER, keys, id, ttlMillis)
                        .thenCompose(fenceOf -> {
                            if (fenceOf < 1) {
                                throw new IllegalStateException("minimal fenced acquire found the lock held");
                            }
                            return async.<Long>evalsha(cad, ScriptOutputType.INTEGER, new String[] {keys[0]}, id);
                        }).toCompletableFuture().join() != 1) {
                    throw new IllegalStateException("compare-and-delete failed");
                }
            });
            rows.put("fence-guard AsyncLockClient pair", i -> {
                if (!asyncLocks.tryAcquire(fgKeys[i % KEYS], TTL)
                        .thenCompose(lease -> asyncLocks.release(lease.orElseThrow(() -> new IllegalStateException("not acquired"))))
                        .toCompletableFuture().join()) {
                    throw new IllegalStateException("release failed");
                }
            });
            run("Redis", ops, rounds, rows);
            RedisBenchmark.deleteAll(redis, prefix);
        } finally {
            client.shutdown();
        }
    }

    private static void postgres(int ops, int rounds) throws Exception {
        TestPostgres server = TestPostgres.server();
        try (TestPostgres.Schema schema = server.newSchema("alloc");
                HikariDataSource pool = Harness.pool(schema.dataSource(), 2)) {
            String s = schema.name();
            System.out.printf(Locale.ROOT, "%nPostgreSQL %s (%s), one HikariCP pool of 2 shared by every row%n", server.version(),
                    server.origin());
            FenceGuardMigrations.builder(pool).withSchema(s).migrate();
            schema.execute("CREATE TABLE " + s + ".hand_locks (lock_key TEXT PRIMARY KEY, fence BIGINT NOT NULL, lock_id TEXT, "
                    + "expires_at TIMESTAMPTZ)");
            schema.execute("INSERT INTO " + s + ".hand_locks SELECT 'alloc:' || g, 0, NULL, NULL FROM generate_series(0, " + (KEYS - 1) + ") g");
            schema.execute("CREATE TABLE " + s + ".orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)");
            schema.execute("INSERT INTO " + s + ".orders SELECT g, 'new', 0 FROM generate_series(0, " + (2 * KEYS - 1) + ") g");
            String grant = "UPDATE " + s + ".hand_locks SET fence = fence + 1, lock_id = ?, "
                    + "expires_at = clock_timestamp() + ? * INTERVAL '1 millisecond' "
                    + "WHERE lock_key = ? AND (lock_id IS NULL OR expires_at < clock_timestamp()) RETURNING fence";
            String free = "UPDATE " + s + ".hand_locks SET lock_id = NULL, expires_at = NULL WHERE lock_key = ? AND lock_id = ?";
            String fencedUpdate = "UPDATE " + s + ".orders SET status = ?, fence_token = ? WHERE id = ? AND fence_token <= ?";
            String[] keys = keys("alloc:");
            Long[] handIds = new Long[KEYS];
            Long[] fgIds = new Long[KEYS];
            for (int k = 0; k < KEYS; k++) {
                handIds[k] = (long) k;
                fgIds[k] = (long) (KEYS + k);
            }
            LockClient locks = LockClient.builder(FenceGuardJdbc.builder(pool).withSchema(s).build().lockBackend())
                    .withMetrics(LockMetrics.none()).build();
            AsyncLockClient asyncLocks = locks.async();
            // Diagnostic: the same backend on two platform threads, to tell the virtual thread per call from the rest.
            ExecutorService platform = Executors.newFixedThreadPool(2, Thread.ofPlatform().name("alloc-executor-", 0).factory());
            LockClient onPlatform = LockClient.builder(FenceGuardJdbc.builder(pool).withSchema(s).withExecutor(platform).build()
                    .lockBackend()).withMetrics(LockMetrics.none()).build();
            FencedWriter writer = FencedTable.builder(s, "orders", "id", "fence_token").withKeyType(Long.class).build().on(pool);
            Assignments paid = Assignments.of("status", "paid");
            long ttlMillis = TTL.toMillis();

            Map<String, Op> rows = new LinkedHashMap<>();
            rows.put("JDBC fenced UPDATE by hand", i -> {
                try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(fencedUpdate)) {
                    ps.setString(1, "paid");
                    ps.setLong(2, FENCE.value());
                    ps.setLong(3, handIds[i % KEYS]);
                    ps.setLong(4, FENCE.value());
                    if (ps.executeUpdate() != 1) {
                        throw new IllegalStateException("not applied");
                    }
                }
            });
            rows.put("fence-guard FencedWriter.update", i -> {
                if (!writer.update(fgIds[i % KEYS], FENCE, paid).isApplied()) {
                    throw new IllegalStateException("not applied");
                }
            });
            rows.put("fence-guard FencedWriter.update, Assignments made per call", i -> {
                if (!writer.update(fgIds[i % KEYS], FENCE, Assignments.of("status", "paid")).isApplied()) {
                    throw new IllegalStateException("not applied");
                }
            });
            rows.put("JDBC lock pair by hand (2 PK UPDATEs)", i -> {
                String key = keys[i % KEYS];
                String id = LockId.random().value();
                try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(grant)) {
                    ps.setString(1, id);
                    ps.setLong(2, ttlMillis);
                    ps.setString(3, key);
                    try (ResultSet rs = ps.executeQuery()) {
                        if (!rs.next() || rs.getLong(1) < 1) {
                            throw new IllegalStateException("not granted");
                        }
                    }
                }
                try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(free)) {
                    ps.setString(1, key);
                    ps.setString(2, id);
                    if (ps.executeUpdate() != 1) {
                        throw new IllegalStateException("not released");
                    }
                }
            });
            rows.put("fence-guard LockClient pair", i -> release(locks, locks.tryAcquire(keys[i % KEYS], TTL)));
            rows.put("fence-guard AsyncLockClient pair", i -> {
                if (!asyncLocks.tryAcquire(keys[i % KEYS], TTL)
                        .thenCompose(lease -> asyncLocks.release(lease.orElseThrow(() -> new IllegalStateException("not acquired"))))
                        .toCompletableFuture().join()) {
                    throw new IllegalStateException("release failed");
                }
            });
            rows.put("fence-guard LockClient pair, 2 platform threads (diagnostic)",
                    i -> release(onPlatform, onPlatform.tryAcquire(keys[i % KEYS], TTL)));
            try {
                run("PostgreSQL", ops, rounds, rows);
            } finally {
                platform.shutdown();
            }
        }
    }

    private static void release(LockClient locks, Optional<Lease> lease) {
        if (!locks.release(lease.orElseThrow(() -> new IllegalStateException("not acquired")))) {
            throw new IllegalStateException("release failed");
        }
    }

    /** A warm-up phase of every row, then {@code rounds} rounds of every row in turn; prints every round and the medians. */
    private static void run(String store, int ops, int rounds, Map<String, Op> all) throws Exception {
        List<String> only = List.of(System.getProperty("alloc.only", "").split(",", -1));
        Map<String, Op> rows = new LinkedHashMap<>();
        all.forEach((name, op) -> {
            if (only.stream().anyMatch(name::contains)) {
                rows.put(name, op);
            }
        });
        for (Op op : rows.values()) {
            measure(op, ops);
        }
        Map<String, List<Phase>> phases = new LinkedHashMap<>();
        for (int r = 0; r < rounds; r++) {
            for (Map.Entry<String, Op> row : rows.entrySet()) {
                phases.computeIfAbsent(row.getKey(), k -> new ArrayList<>()).add(measure(row.getValue(), ops));
            }
        }
        System.out.printf(Locale.ROOT, "%n%s, bytes allocated per operation in each round%n", store);
        phases.forEach((name, list) -> System.out.printf(Locale.ROOT, "  %-48s %s%n", name,
                list.stream().map(p -> String.format(Locale.ROOT, "%,.0f", p.bytesPerOp())).toList()));
        System.out.printf(Locale.ROOT, "%n| %s | bytes/op, median (min .. max) | by thread, median round | ops/s, median |%n|---|---|---|---|%n", store);
        phases.forEach((name, list) -> {
            List<Phase> sorted = new ArrayList<>(list);
            sorted.sort((a, b) -> Double.compare(a.bytesPerOp(), b.bytesPerOp()));
            Phase median = sorted.get(sorted.size() / 2);
            double[] speeds = list.stream().mapToDouble(Phase::opsPerSecond).sorted().toArray();
            StringBuilder split = new StringBuilder();
            median.byKind().forEach((kind, bytes) -> {
                if (Math.abs(bytes) >= 0.5) {
                    split.append(split.isEmpty() ? "" : ", ").append(kind).append(' ').append(String.format(Locale.ROOT, "%,.0f", bytes));
                }
            });
            System.out.printf(Locale.ROOT, "| %s | %,.0f (%,.0f .. %,.0f) | %s | %,.0f |%n", name, median.bytesPerOp(),
                    sorted.getFirst().bytesPerOp(), sorted.getLast().bytesPerOp(), split, speeds[speeds.length / 2]);
        });
    }

    private static Phase measure(Op op, int ops) throws Exception {
        Map<Long, String> names = names();
        Map<Long, Long> before = allocatedByThread();
        long total0 = THREADS.getTotalThreadAllocatedBytes();
        long t0 = System.nanoTime();
        for (int i = 0; i < ops; i++) {
            op.run(i);
        }
        long elapsed = System.nanoTime() - t0;
        long total = THREADS.getTotalThreadAllocatedBytes() - total0;
        Map<Long, Long> after = allocatedByThread();
        names.putAll(names()); // threads started during the phase
        Map<String, Double> byKind = new TreeMap<>();
        long live = 0;
        for (Map.Entry<Long, Long> e : after.entrySet()) {
            long grown = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            live += grown;
            byKind.merge(kind(names.get(e.getKey())), grown / (double) ops, Double::sum);
        }
        byKind.put("ended", (total - live) / (double) ops);
        return new Phase(total / (double) ops, ops / (elapsed / 1e9), byKind);
    }

    /** Who a thread is, by its name: the caller, fence-guard's timer, a driver's thread, or other. */
    private static String kind(String name) {
        if (name == null) {
            return "other";
        }
        if (name.equals(Thread.currentThread().getName())) {
            return "caller";
        }
        if (name.startsWith("fence-guard-timer")) {
            return "timer";
        }
        if (name.startsWith("lettuce-")) {
            return "lettuce";
        }
        if (name.startsWith("ForkJoinPool-")) {
            return "carriers"; // the virtual threads' carriers: the JDBC backends' calls
        }
        if (name.startsWith("alloc-executor-")) {
            return "executor";
        }
        return "other";
    }

    /** Each live thread's allocated bytes; read before the names, whose reading allocates more. */
    private static Map<Long, Long> allocatedByThread() {
        long[] ids = THREADS.getAllThreadIds();
        long[] bytes = THREADS.getThreadAllocatedBytes(ids);
        Map<Long, Long> out = new HashMap<>();
        for (int t = 0; t < ids.length; t++) {
            if (bytes[t] >= 0) {
                out.put(ids[t], bytes[t]);
            }
        }
        return out;
    }

    private static Map<Long, String> names() {
        Map<Long, String> names = new HashMap<>();
        for (java.lang.management.ThreadInfo info : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
            if (info != null) {
                names.put(info.getThreadId(), info.getThreadName());
            }
        }
        return names;
    }
}
