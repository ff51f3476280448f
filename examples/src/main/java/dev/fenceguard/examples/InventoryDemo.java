package dev.fenceguard.examples;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.redis.FencedRedis;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/**
 * Inventory on Redis: workers reserve stock under a lock, and a zombie that stalled past its lease
 * tries to decrement the count it read before the stall. The decrement is a fenced Lua script
 * ({@link FencedRedis#eval}) and every holder claims the fence before it reads, so the count never
 * goes wrong: the zombie's decrement is refused.
 *
 * <p>Redis comes from {@code --redis redis://HOST:PORT}, else the test-server harness
 * ({@code FENCE_GUARD_TEST_REDIS_URL}, Testcontainers, or {@code redis-server} on the PATH).
 * Exits 1 if the final stock is wrong.
 */
public final class InventoryDemo {

    /** Sets the stock to what the caller read minus ARGV[1]: a read-modify-write, fenced. */
    private static final String SET_STOCK = "redis.call('SET', KEYS[1], ARGV[1]) return tonumber(ARGV[1])";

    public static void main(String[] args) throws Exception {
        Quiet.apply();
        System.exit(run(args, System.out));
    }

    public static int run(String[] args, PrintStream out) throws Exception {
        String uri = args.length == 2 && args[0].equals("--redis") ? args[1] : TestRedis.server().uri().toString();
        String prefix = "fence-guard-inventory:" + UUID.randomUUID().toString().substring(0, 8) + ":";
        RedisClient client = RedisClient.create(uri);
        try (StatefulRedisConnection<String, String> conn = client.connect();
                FenceGuardRedis fenceGuard = FenceGuardRedis.builder(conn).withKeyPrefix(prefix).withFenceKeyPrefix(prefix + "fence:")
                        .withMetrics(LockMetrics.none()).build()) {
            FencedRedis redis = fenceGuard.fencedWrites();
            LockClient locks = LockClient.builder(fenceGuard.lockBackend()).withMetrics(LockMetrics.none()).build();
            String stock = prefix + "stock:{sku-1}"; // outside the lock key space (prefix + "{"), which FencedRedis refuses
            conn.sync().set(stock, "10");
            Duration ttl = Duration.ofMillis(500);
            out.println("inventory demo on Redis at " + uri + ": sku-1 starts with 10 in stock");

            Lease zombie = locks.tryAcquire("sku-1", ttl).orElseThrow();
            redis.claim(stock, zombie.fence()).orThrow();
            long zombieRead = Long.parseLong(conn.sync().get(stock));
            out.println("worker Z (fence " + zombie.fence().value() + ") reads stock " + zombieRead + " to reserve 3, then stalls");
            Thread.sleep(ttl.multipliedBy(2).toMillis());

            for (String worker : List.of("X", "Y")) {
                try (Lease lease = locks.acquire("sku-1", ttl, Duration.ofSeconds(5)).orElseThrow()) {
                    redis.claim(stock, lease.fence()).orThrow(); // from now on older fences are refused
                    long read = Long.parseLong(conn.sync().get(stock));
                    WriteOutcome o = redis.eval(SET_STOCK, List.of(stock), lease.fence(), List.of(Long.toString(read - 2))).outcome();
                    out.println("worker " + worker + " (fence " + lease.fence().value() + ") reserves 2: " + read + " -> " + (read - 2)
                            + ": " + (o.isApplied() ? "Applied" : o));
                }
            }
            WriteOutcome late = redis.eval(SET_STOCK, List.of(stock), zombie.fence(), List.of(Long.toString(zombieRead - 3))).outcome();
            out.println("worker Z wakes and writes " + zombieRead + " - 3 = " + (zombieRead - 3) + " with fence "
                    + zombie.fence().value() + ": " + (late instanceof WriteOutcome.Stale s
                            ? "Stale (the stock holds fence " + s.currentFence() + ")" : late.toString()));
            long finalStock = Long.parseLong(conn.sync().get(stock));
            boolean ok = finalStock == 6 && !late.isApplied();
            out.println("final stock " + finalStock + " (expected 10 - 2 - 2 = 6): " + (ok ? "OK" : "WRONG"));
            conn.sync().del(conn.sync().keys(prefix + "*").toArray(String[]::new));
            return ok ? 0 : 1;
        } finally {
            client.shutdown();
        }
    }
}
