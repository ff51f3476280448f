package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.testkit.servers.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Fences stay monotonic when Redis forgets: restart without persistence, FLUSHALL, and failover to a
 * replica that lagged. Each test runs its own redis-server(s) on free loopback ports.
 */
class RedisDataLossTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final LockKey KEY = LockKey.of("orders:42");

    /** Acquires and releases {@code n} times; returns the highest fence. */
    private static long issue(RedisLockBackend backend, int n) {
        long max = 0;
        for (int i = 0; i < n; i++) {
            LockId id = LockId.random();
            long fence = backend.tryAcquire(KEY, id, TTL).orElseThrow().fence();
            assertThat(fence).isGreaterThan(max);
            max = fence;
            backend.release(KEY, id);
        }
        return max;
    }

    private static long next(RedisLockBackend backend) {
        LockId id = LockId.random();
        long fence = backend.tryAcquire(KEY, id, TTL).orElseThrow().fence();
        backend.release(KEY, id);
        return fence;
    }

    @Test
    void restartWithoutPersistence() {
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try {
                long before;
                try (RedisLockBackend backend = RedisLockBackend.builder(client).build()) {
                    before = issue(backend, 50);
                }
                server.restart();
                try (RedisLockBackend backend = RedisLockBackend.builder(client).build()) {
                    assertThat(backend.lookup(KEY)).isEmpty();
                    assertThat(next(backend)).as("first fence after the restart").isGreaterThan(before);
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
            try (RedisLockBackend floored = RedisLockBackend.builder(client).build();
                    RedisLockBackend dense = RedisLockBackend.builder(client).withKeyPrefix("dense:")
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
    void failoverToALaggingReplica() throws Exception {
        try (RedisServers.Server master = RedisServers.start();
                RedisServers.Server replica = RedisServers.start()) {
            RedisClient masterClient = RedisClient.create(RedisURI.create(master.uri()));
            RedisClient replicaClient = RedisClient.create(RedisURI.create(replica.uri()));
            try (StatefulRedisConnection<String, String> r = replicaClient.connect();
                    RedisLockBackend onMaster = RedisLockBackend.builder(masterClient).build()) {
                r.sync().replicaof("127.0.0.1", master.port());
                issue(onMaster, 20);
                awaitSynced(r);
                // Detach the replica (it now lags forever), then keep issuing on the old master.
                r.sync().replicaofNoOne();
                long onMasterMax = issue(onMaster, 200);
                // Fail over: clients now talk to the replica, which never saw those 200 fences.
                try (RedisLockBackend onReplica = RedisLockBackend.builder(replicaClient).build()) {
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
