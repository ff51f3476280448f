package dev.fenceguard.spring.integration;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link FencedLockRegistryContract} on the shared Redis, writes fenced by {@code FencedRedis}. */
class RedisFencedLockRegistryTest extends FencedLockRegistryContract {

    static final String PREFIX = TestRedis.keyPrefix("si-registry");
    static RedisClient client;
    static FenceGuardRedis redis;

    @BeforeAll
    static void setUp() {
        client = RedisClient.create(TestRedis.server().uri().toString());
        redis = FenceGuardRedis.builder(client).withKeyPrefix(PREFIX + "lock:").withFenceKeyPrefix(PREFIX + "fence:").build();
    }

    @AfterAll
    static void tearDown() {
        redis.close();
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                KeyScanCursor<String> page = c.sync().scan(cursor, ScanArgs.Builder.matches(PREFIX + "*").limit(500));
                if (!page.getKeys().isEmpty()) {
                    c.sync().del(page.getKeys().toArray(String[]::new));
                }
                cursor = page;
            } while (!cursor.isFinished());
        }
        client.shutdown();
    }

    @Override
    protected LockBackend backend() {
        return redis.lockBackend();
    }

    @Override
    protected WriteOutcome write(String resource, FenceToken fence) {
        return redis.fencedWrites().set(PREFIX + "data:" + resource, fence, "written with " + fence.value());
    }
}
