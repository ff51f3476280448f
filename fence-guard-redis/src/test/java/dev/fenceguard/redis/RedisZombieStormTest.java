package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.ZombieStorm;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The zombie storm on the Redis lock backend with FencedRedis, standalone and on a Cluster. */
class RedisZombieStormTest {

    private static ZombieStorm.Result storm(RedisLockBackend backend, FencedRedis fenced, Function<String, String> get,
            String key) throws Exception {
        LockClient locks = LockClient.builder(backend).withMetrics(LockMetrics.none()).build();
        return ZombieStorm.builder(locks, "counter:" + key, new ZombieStorm.FencedCounter() {
            @Override
            public WriteOutcome claim(FenceToken fence) {
                return fenced.claim(key, fence);
            }

            @Override
            public long read() {
                String v = get.apply(key);
                return v == null ? 0 : Long.parseLong(v);
            }

            @Override
            public WriteOutcome write(long value, FenceToken fence) {
                return fenced.set(key, Long.toString(value), fence);
            }
        }).build().run();
    }

    @Test
    void standalone() throws Exception {
        String prefix = TestRedis.keyPrefix("storm");
        try (StatefulRedisConnection<String, String> c = RedisSupport.shared().connect();
                RedisLockBackend backend = RedisLockBackend.builder(c).withKeyPrefix(prefix).build()) {
            FencedRedis fenced = FencedRedis.builder(c).withFenceKeyPrefix(prefix + "fence:").withMetrics(LockMetrics.none()).build();
            c.sync().set(prefix + "counter", "0"); // the counter exists, as in the PostgreSQL storm: a claim of an absent key is NotFound
            ZombieStorm.Result r = storm(backend, fenced, k -> c.sync().get(k), prefix + "counter");
            System.out.println("redis standalone " + r.summary());
            assertThat(r.stalls()).isPositive();
            assertThat(r.rejectedStale()).isPositive();
            assertThat(r.isSafe()).as(r.summary()).isTrue();
        } finally {
            RedisSupport.deleteKeys(prefix);
        }
    }

    @Test
    void cluster() throws Exception {
        try (StatefulRedisClusterConnection<String, String> c = RedisSupport.cluster().connect();
                RedisLockBackend backend = RedisLockBackend.builder(c).build()) {
            FencedRedis fenced = FencedRedis.builder(c).withMetrics(LockMetrics.none()).build();
            c.sync().set("storm-counter", "0");
            ZombieStorm.Result r = storm(backend, fenced, k -> c.sync().get(k), "storm-counter");
            System.out.println("redis cluster " + r.summary());
            assertThat(r.stalls()).isPositive();
            assertThat(r.isSafe()).as(r.summary()).isTrue();
        }
    }
}
