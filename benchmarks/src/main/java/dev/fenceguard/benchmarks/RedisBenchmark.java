package dev.fenceguard.benchmarks;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.redis.FencedRedis;
import dev.fenceguard.redis.RedisLockBackend;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.Locale;

/**
 * Redis benchmarks of issue #4, as ratios against baselines in the same run on one shared Lettuce
 * connection and the same threads:
 * <ol>
 *   <li>acquire + release pairs/s vs raw {@code SET NX PX} + {@code DEL} (target >= 0.8x);</li>
 *   <li>fenced SET vs plain SET (target >= 0.8x);</li>
 *   <li>bytes per idle lock key ({@code MEMORY USAGE}), reported.</li>
 * </ol>
 * Server: {@link TestRedis#server()}. Arguments: {@code [seconds-per-phase=5] [threads=4] [rounds=3]}.
 */
public final class RedisBenchmark {

    public static void main(String[] args) throws Exception {
        Harness.Args cli = Harness.Args.of(args, 5, 4, 3);
        TestRedis server = TestRedis.server();
        String prefix = TestRedis.keyPrefix("bench");
        RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
        try (StatefulRedisConnection<String, String> conn = client.connect();
                FenceGuardRedis fenceGuard = FenceGuardRedis.builder(conn).withKeyPrefix(prefix).withFenceKeyPrefix(prefix + "fence:")
                        .withMetrics(LockMetrics.none()).build()) {
            RedisLockBackend backend = fenceGuard.lockBackend();
            FencedRedis fenced = fenceGuard.fencedWrites();
            RedisCommands<String, String> redis = conn.sync();
            // The backend is asynchronous; this waits on each call, as the baseline's sync commands do.
            BlockingBackend locks = BlockingBackend.of(backend);
            System.out.printf("Redis %s (%s), one shared Lettuce connection, %d threads, %.1f s per phase, %d alternating rounds%n%n",
                    redis.info("server").lines().filter(l -> l.startsWith("redis_version:")).findFirst().orElse("?").substring(14),
                    server.origin(), cli.threads(), cli.seconds(), cli.rounds());
            Harness h = new Harness(cli.threads(), cli.seconds());
            Duration ttl = Duration.ofSeconds(30);
            SetArgs nxpx = SetArgs.Builder.nx().px(30_000);

            Harness.Op acquireRelease = (t, i) -> {
                LockKey key = LockKey.of("bench:" + t + ":" + (i % 250));
                LockId id = LockId.random();
                locks.tryAcquire(key, id, ttl).orElseThrow();
                if (!locks.release(key, id)) {
                    throw new IllegalStateException("release failed");
                }
            };
            Harness.Op rawSetNxDel = (t, i) -> {
                String key = prefix + "raw:" + t + ":" + (i % 250);
                if (!"OK".equals(redis.set(key, LockId.random().value(), nxpx))) {
                    throw new IllegalStateException("SET NX failed");
                }
                redis.del(key);
            };
            h.measure(acquireRelease);
            h.measure(rawSetNxDel);
            Harness.Phase[] r1 = h.compare(cli.rounds(), acquireRelease, rawSetNxDel);
            report("acquire+release pairs/s", r1[0], "SET NX PX + DEL", r1[1], 0.8);

            FenceToken fence = FenceToken.of(7);
            Harness.Op fencedSet = (t, i) -> {
                if (!fenced.set(prefix + "data:" + t + ":" + (i % 250), fence, "value").isApplied()) {
                    throw new IllegalStateException("not applied");
                }
            };
            Harness.Op plainSet = (t, i) -> redis.set(prefix + "plain:" + t + ":" + (i % 250), "value");
            h.measure(fencedSet);
            h.measure(plainSet);
            Harness.Phase[] r2 = h.compare(cli.rounds(), fencedSet, plainSet);
            report("fenced SET ops/s", r2[0], "plain SET", r2[1], 0.8);

            // The floor any script-based write stands on: a script that does nothing but the same SET.
            String trivialSha = redis.scriptLoad("return redis.call('SET', KEYS[1], ARGV[1])");
            Harness.Op trivialScript = (t, i) -> redis.evalsha(trivialSha, io.lettuce.core.ScriptOutputType.STATUS,
                    new String[] {prefix + "trivial:" + t + ":" + (i % 250)}, "value");
            h.measure(trivialScript);
            Harness.Phase[] r3 = h.compare(cli.rounds(), trivialScript, plainSet);
            report("EVALSHA of a bare SET", r3[0], "plain SET", r3[1], 0.0);

            String idleKey = "bench:memory:orders:12345";
            LockId id = LockId.random();
            locks.tryAcquire(LockKey.of(idleKey), id, ttl).orElseThrow();
            long heldLock = redis.memoryUsage(backend.lockKeyOf(idleKey));
            long counter = redis.memoryUsage(backend.fenceKeyOf(idleKey));
            locks.release(LockKey.of(idleKey), id);
            System.out.printf(Locale.ROOT, "memory for key '%s' (%d chars): idle lock = fence counter only: %d bytes; "
                    + "held lock adds the lock key: %d bytes (MEMORY USAGE)%n", idleKey, idleKey.length(), counter, heldLock);
            String data = prefix + "data:0:0";
            System.out.printf(Locale.ROOT, "fenced SET value key %d bytes + its fence key %d bytes (MEMORY USAGE)%n",
                    redis.memoryUsage(data), redis.memoryUsage(fenced.fenceKeyOf(data)));
            deleteAll(redis, prefix);
        } finally {
            client.shutdown();
        }
    }

    private static void report(String name, Harness.Phase a, String baseline, Harness.Phase b, double target) {
        double ratio = a.opsPerSecond() / b.opsPerSecond();
        System.out.printf(Locale.ROOT, "%-28s %9.0f/s  p50 %4d us%n%-28s %9.0f/s  p50 %4d us%n  ratio %.2fx (target >= %.1fx): %s%n%n",
                name, a.opsPerSecond(), a.p50Micros(), baseline, b.opsPerSecond(), b.p50Micros(), ratio, target, ratio >= target ? "MET" : "MISSED");
    }

    /** Deletes every key under {@code prefix}; the async benchmark cleans up the same way. */
    static void deleteAll(RedisCommands<String, String> redis, String prefix) {
        ScanCursor cursor = ScanCursor.INITIAL;
        do {
            KeyScanCursor<String> page = redis.scan(cursor, ScanArgs.Builder.matches(prefix + "*").limit(1000));
            if (!page.getKeys().isEmpty()) {
                redis.del(page.getKeys().toArray(String[]::new));
            }
            cursor = page;
        } while (!cursor.isFinished());
    }
}
