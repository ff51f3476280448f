package dev.fenceguard.examples.docs;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.singleflight.ResultCodec;
import dev.fenceguard.core.singleflight.Singleflight;
import dev.fenceguard.redis.AsyncFencedRedis;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.redis.FencedRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The samples of docs/redis.md and of the Javadoc of {@code dev.fenceguard.redis}. They use fixed keys
 * ({@code stock:sku-1}, lock {@code sku-1}, the default prefixes), so the test runs them on a private
 * {@code redis-server} of its own.
 */
final class RedisSamples {

    private RedisSamples() {}

    static void docSetUp(String redisUri) throws Exception {
        // docs/redis.md: setup (begin)
        RedisClient client = RedisClient.create(redisUri);   // "redis://host:6379", or a Sentinel URI; or a RedisClusterClient
        try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build()) {
            LockClient locks = LockClient.of(redis.lockBackend());
            FencedRedis writes = redis.fencedWrites();
            locks.withLock("sku-1", Duration.ofSeconds(10), Duration.ofSeconds(2), lease ->
                    writes.set("stock:sku-1", lease.fence(), "41").orThrow());
        }
        // docs/redis.md: setup (end)
        client.shutdown();
    }

    /** The entry of docs/redis.md's tombstones section, built on {@code client}. */
    static FenceGuardRedis docHorizon(RedisClient client) {
        // docs/redis.md: horizon (begin)
        FenceGuardRedis redis = FenceGuardRedis.builder(client)
                .withHorizon(Duration.ofDays(7))          // a fence record is created only by a fence above tick(TIME - 7 days)
                .withClockMargin(Duration.ofMinutes(5))   // the default; how far the server clock may step back
                .build();
        // docs/redis.md: horizon (end)
        return redis;
    }

    static void javadocEntry(String redisUri) throws Exception {
        // dev/fenceguard/redis/FenceGuardRedis.java: entry (begin)
        RedisClient client = RedisClient.create(redisUri);   // "redis://host:6379", or a Sentinel URI; or a RedisClusterClient
        try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build()) {
            LockClient locks = LockClient.of(redis.lockBackend());
            FencedRedis writes = redis.fencedWrites();
            locks.withLock("sku-1", Duration.ofSeconds(10), Duration.ofSeconds(2), lease ->
                    writes.set("stock:sku-1", lease.fence(), "41").orThrow());
        }
        // dev/fenceguard/redis/FenceGuardRedis.java: entry (end)
        client.shutdown();
    }

    static Optional<WriteOutcome> docAsync(FenceGuardRedis redis, LockClient locks) {
        // docs/redis.md: async face (begin)
        AsyncFencedRedis writes = redis.fencedWrites().async();
        CompletionStage<Optional<WriteOutcome>> written = locks.async().withLock("sku-1", Duration.ofSeconds(30), Duration.ofSeconds(5),
                lease -> writes.set("stock:sku-1", lease.fence(), "41").thenApply(WriteOutcome::orThrow));   // empty: lock not had
        // docs/redis.md: async face (end)
        return written.toCompletableFuture().join();
    }

    static Optional<WriteOutcome> javadocAsync(FenceGuardRedis redis, LockClient locks, Duration ttl, Duration maxWait) {
        // dev/fenceguard/redis/AsyncFencedRedis.java: async face (begin)
        AsyncFencedRedis writes = redis.fencedWrites().async();
        CompletionStage<Optional<WriteOutcome>> written = locks.async().withLock("sku-1", ttl, maxWait, lease ->
                writes.set("stock:sku-1", lease.fence(), "41").thenApply(WriteOutcome::orThrow));   // empty: lock not had
        // dev/fenceguard/redis/AsyncFencedRedis.java: async face (end)
        return written.toCompletableFuture().join();
    }

    static void docClaimFirst(FenceGuardRedis redis, LockClient locks, StatefulRedisConnection<String, String> conn) throws Exception {
        // docs/redis.md: claim first (begin)
        FencedRedis writes = redis.fencedWrites();
        locks.withLock("sku-1", Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> {
            writes.claim("{sku-1}:stock", lease.fence()).orThrow();       // from here on older fences are Stale
            long stock = Long.parseLong(conn.sync().get("{sku-1}:stock"));
            return writes.set("{sku-1}:stock", lease.fence(), Long.toString(stock - 2)).orThrow();
        });
        // docs/redis.md: claim first (end)
    }

    static Optional<WriteOutcome> docClaimFirstAsync(FenceGuardRedis redis, LockClient locks, StatefulRedisConnection<String, String> conn) {
        // docs/redis.md: claim first, async (begin)
        AsyncFencedRedis writes = redis.fencedWrites().async();
        CompletionStage<Optional<WriteOutcome>> sold = locks.async().withLock("sku-1", Duration.ofSeconds(30), Duration.ofSeconds(5),
                lease -> writes.claim("{sku-1}:stock", lease.fence())
                        .thenApply(WriteOutcome::orThrow)                  // from here on older fences are Stale
                        .thenCompose(claimed -> conn.async().get("{sku-1}:stock"))
                        .thenCompose(stock -> writes.set("{sku-1}:stock", lease.fence(), Long.toString(Long.parseLong(stock) - 2)))
                        .thenApply(WriteOutcome::orThrow));
        // docs/redis.md: claim first, async (end)
        return sold.toCompletableFuture().join();
    }

    /** A stand-in for the application's own work under a lock: it records the fence it was given. */
    static final class Orders {
        final Map<Long, FenceToken> shipped = new ConcurrentHashMap<>();

        void ship(long id, FenceToken fence) {
            shipped.put(id, fence);
        }
    }

    static void lockBackend(RedisClient redisClient, Orders orders) throws Exception {
        // dev/fenceguard/redis/RedisLockBackend.java: lock backend (begin)
        try (FenceGuardRedis redis = FenceGuardRedis.builder(redisClient).build()) {
            LockClient locks = LockClient.of(redis.lockBackend());
            try (Lease lease = locks.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow()) {
                orders.ship(42L, lease.fence());               // your work; its fenced writes carry lease.fence()
            }
        }
        // dev/fenceguard/redis/RedisLockBackend.java: lock backend (end)
    }

    static void fencedWrites(RedisClient redisClient, Lease lease) {
        // dev/fenceguard/redis/FencedRedis.java: fenced writes (begin)
        try (FenceGuardRedis redis = FenceGuardRedis.builder(redisClient).build()) {
            FencedRedis writes = redis.fencedWrites();
            writes.set("stock:sku-1", lease.fence(), "41").orThrow();               // StaleFenceException for a zombie
            writes.hset("order:42", lease.fence(), Map.of("status", "paid")).orThrow();
        }
        // dev/fenceguard/redis/FencedRedis.java: fenced writes (end)
    }

    static void flightStore(RedisClient redisClient, LockClient lockClient, SingleflightSamples.RateProvider rateProvider)
            throws Exception {
        // dev/fenceguard/redis/RedisFlightStore.java: flight store (begin)
        try (FenceGuardRedis redis = FenceGuardRedis.builder(redisClient).build()) {
            Singleflight flights = Singleflight.builder(lockClient, redis.flightStore()).build();
            String rates = flights.run("rates:2026-11-23", Duration.ofSeconds(20), ResultCodec.utf8(),
                    lease -> rateProvider.fetch());            // computed by one caller; the others get its result
        }
        // dev/fenceguard/redis/RedisFlightStore.java: flight store (end)
    }
}
