package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.testkit.ZombieStorm;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import org.junit.jupiter.api.Test;

/**
 * The zombie storm on the Redis lock backend with FencedRedis, standalone and on a Cluster. Size: 300
 * attempts, or {@code -Dfenceguard.storm.attempts=N} for a soak.
 */
class RedisZombieStormTest {

    @Test
    void standalone() throws Exception {
        String prefix = TestRedis.keyPrefix("storm");
        try (StatefulRedisConnection<String, String> c = RedisSupport.shared().connect();
                FenceGuardRedis redis = FenceGuardRedis.builder(c).withKeyPrefix(prefix).withFenceKeyPrefix(prefix + "fence:")
                        .withMetrics(LockMetrics.none()).build()) {
            ZombieStorm.Result r = RedisStorms.storm(redis.lockBackend(), "counter",
                    RedisStorms.counter(redis.fencedWrites(), c.sync(), prefix + "counter"),
                    ZombieStorm.attemptsProperty(300)).build().run();
            System.out.println("STORM redis standalone: " + r.summary());
            assertThat(r.stalls()).isPositive();
            assertThat(r.rejectedStale()).isPositive();
            r.requireSafe();
        } finally {
            RedisSupport.deleteKeys(prefix);
        }
    }

    @Test
    void cluster() throws Exception {
        String key = "{storm-" + java.util.UUID.randomUUID().toString().substring(0, 8) + "}:counter";
        try (StatefulRedisClusterConnection<String, String> c = RedisSupport.cluster().connect();
                FenceGuardRedis redis = FenceGuardRedis.builder(c).withMetrics(LockMetrics.none()).build()) {
            ZombieStorm.Result r = RedisStorms.storm(redis.lockBackend(), "counter", RedisStorms.counter(redis.fencedWrites(), c.sync(), key),
                    ZombieStorm.attemptsProperty(300)).build().run();
            System.out.println("STORM redis cluster: " + r.summary());
            assertThat(r.stalls()).isPositive();
            r.requireSafe();
        }
    }
}
