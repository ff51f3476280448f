package dev.fenceguard.shedlock;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** ShedLock's own provider suite, unmodified, on the test Redis (standalone). */
class RedisShedLockProviderTest extends ShedLockSuite {

    private static final String PREFIX = TestRedis.keyPrefix("shedlock");
    private static RedisClient client;
    private static FenceGuardRedis redis;
    private static LockClient locks;

    @BeforeAll
    static void setUp() {
        client = RedisClient.create(TestRedis.server().uri().toString());
        redis = TestRedisKeys.builder(client, PREFIX).build();
        locks = clientOf(redis.lockBackend());
    }

    @AfterAll
    static void tearDown() {
        redis.close();
        TestRedisKeys.delete(client, PREFIX);
        client.shutdown();
    }

    @Override
    LockClient locks() {
        return locks;
    }
}
