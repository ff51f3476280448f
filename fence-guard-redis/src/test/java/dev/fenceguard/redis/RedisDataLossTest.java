package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Fences stay monotonic when Redis forgets: restart without persistence, FLUSHALL, and failover to a
 * replica that lagged. Each test runs its own redis-server(s) on free loopback ports.
 */
class RedisDataLossTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final LockKey KEY = LockKey.of("orders:42");

    /** Acquires and releases {@code n} times; returns the highest fence. */
    private static long issue(FenceGuardRedis redis, int n) {
        long max = 0;
        for (int i = 0; i < n; i++) {
            LockId id = LockId.random();
            long fence = BlockingBackend.of(redis.lockBackend()).tryAcquire(KEY, id, TTL).orElseThrow().fence();
            assertThat(fence).isGreaterThan(max);
            max = fence;
            BlockingBackend.of(redis.lockBackend()).release(KEY, id);
        }
        return max;
    }

    private static long next(FenceGuardRedis redis) {
        LockId id = LockId.random();
        long fence = BlockingBackend.of(redis.lockBackend()).tryAcquire(KEY, id, TTL).orElseThrow().fence();
        BlockingBackend.of(redis.lockBackend()).release(KEY, id);
        return fence;
    }

    @Test
    void restartWithoutPersistence() {
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try {
                long before;
                try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build()) {
                    before = issue(redis, 50);
                }
                server.restart();
                try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build()) {
                    assertThat(BlockingBackend.of(redis.lockBackend()).lookup(KEY)).isEmpty();
                    assertThat(next(redis)).as("first fence after the restart").isGreaterThan(before);
                }
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void flushallLosesTheCounterButNotMonotonicity() {
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try (FenceGuardRedis floored = FenceGuardRedis.builder(client).build();
                    FenceGuardRedis dense = FenceGuardRedis.builder(client).withKeyPrefix("dense:")
                            .withFenceStrategy(FenceStrategy.DENSE).build();
                    StatefulRedisConnection<String, String> admin = client.connect()) {
                long flooredBefore = issue(floored, 50);
                long denseBefore = issue(dense, 50);
                assertThat(admin.sync().flushall()).isEqualTo("OK");
                assertThat(next(floored)).isGreaterThan(flooredBefore);
                // Why DENSE is a named choice and not the Redis default: it starts over.
                assertThat(denseBefore).isEqualTo(50);
                assertThat(next(dense)).isEqualTo(1);
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void fencesRiseStrictlyWhenFlushallFallsInTheSameMillisecond() {
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build();
                    StatefulRedisConnection<String, String> admin = client.connect()) {
                Rounds rounds = flushRounds(redis, admin, 400);
                // A floor by whole milliseconds repeats a fence in each of these rounds.
                assertThat(rounds.sameMillisecond).as("rounds with the loss inside one server millisecond").isPositive();
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void fencesRiseStrictlyAcrossFlushallWhileOtherClientsLockOtherKeys() throws Exception {
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            int others = 4;
            AtomicBoolean stop = new AtomicBoolean();
            CountDownLatch started = new CountDownLatch(others);
            ExecutorService pool = Executors.newFixedThreadPool(others);
            try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build();
                    StatefulRedisConnection<String, String> admin = client.connect()) {
                List<Future<Integer>> checks = new ArrayList<>();
                for (int t = 0; t < others; t++) {
                    LockKey other = LockKey.of("other:" + t);
                    checks.add(pool.submit(() -> {
                        // Each other client checks its own key: it loses its counter to the same FLUSHALLs.
                        try (FenceGuardRedis own = FenceGuardRedis.builder(client).build()) {
                            long last = 0;
                            int n = 0;
                            started.countDown();
                            while (!stop.get() || n == 0) {
                                LockId id = LockId.random();
                                long fence = BlockingBackend.of(own.lockBackend()).tryAcquire(other, id, TTL).orElseThrow().fence();
                                BlockingBackend.of(own.lockBackend()).release(other, id);
                                if (fence <= last) {
                                    throw new AssertionError(other + ": fence " + fence + " after " + last);
                                }
                                last = fence;
                                n++;
                            }
                            return n;
                        }
                    }));
                }
                started.await();
                try {
                    flushRounds(redis, admin, 300);
                } finally {
                    stop.set(true);
                }
                for (Future<Integer> check : checks) {
                    assertThat(check.get()).as("acquisitions by another client").isPositive();
                }
            } finally {
                pool.shutdownNow();
                client.shutdown();
            }
        }
    }

    private record Rounds(long last, int sameMillisecond) {}

    /** Rounds of acquire, FLUSHALL, acquire, as fast as one client goes; every fence above all before it. */
    private static Rounds flushRounds(FenceGuardRedis redis, StatefulRedisConnection<String, String> admin, int n) {
        long last = 0;
        int sameMillisecond = 0;
        for (int round = 0; round < n; round++) {
            long before = BlockingBackend.of(redis.lockBackend()).tryAcquire(KEY, LockId.random(), TTL).orElseThrow().fence();
            admin.sync().flushall();
            long after = BlockingBackend.of(redis.lockBackend()).tryAcquire(KEY, LockId.random(), TTL).orElseThrow().fence();
            admin.sync().flushall();
            assertThat(before).as("round %d, before the loss", round).isGreaterThan(last);
            assertThat(after).as("round %d, first fence after the loss", round).isGreaterThan(before);
            if (before / ClockFloor.PER_MILLISECOND == after / ClockFloor.PER_MILLISECOND) {
                sameMillisecond++;
            }
            last = after;
        }
        return new Rounds(last, sameMillisecond);
    }

    @Test
    void failoverToALaggingReplica() throws Exception {
        try (RedisServers.Server master = RedisServers.start();
                RedisServers.Server replica = RedisServers.start()) {
            RedisClient masterClient = RedisClient.create(RedisURI.create(master.uri()));
            RedisClient replicaClient = RedisClient.create(RedisURI.create(replica.uri()));
            try (StatefulRedisConnection<String, String> r = replicaClient.connect();
                    FenceGuardRedis onMaster = FenceGuardRedis.builder(masterClient).build()) {
                r.sync().replicaof("127.0.0.1", master.port());
                issue(onMaster, 20);
                awaitSynced(r);
                // Detach the replica (it now lags forever), then keep issuing on the old master.
                r.sync().replicaofNoOne();
                long onMasterMax = issue(onMaster, 200);
                // Fail over: clients now talk to the replica, which never saw those 200 fences.
                try (FenceGuardRedis onReplica = FenceGuardRedis.builder(replicaClient).build()) {
                    assertThat(next(onReplica)).as("first fence on the promoted replica").isGreaterThan(onMasterMax);
                }
            } finally {
                masterClient.shutdown();
                replicaClient.shutdown();
            }
        }
    }

    private static void awaitSynced(StatefulRedisConnection<String, String> replica) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!replica.sync().info("replication").contains("master_link_status:up")) {
            assertThat(System.nanoTime()).as("replica did not sync").isLessThan(deadline);
            Thread.sleep(50);
        }
        Thread.sleep(200); // let the replication stream deliver the last writes
    }
}
