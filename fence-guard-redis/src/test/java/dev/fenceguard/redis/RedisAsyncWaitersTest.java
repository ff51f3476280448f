package dev.fenceguard.redis;

import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.AsyncWaitersContract;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;

/** {@link AsyncWaitersContract} on the shared Redis: 10,000 callers on one connection. */
class RedisAsyncWaitersTest extends AsyncWaitersContract {

    private final String prefix = "fg-test:waiters:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    private final FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(prefix)
            .withFenceKeyPrefix(prefix + "fence:").withMetrics(LockMetrics.none()).build();

    @Override
    protected LockBackend backend() {
        return redis.lockBackend();
    }

    @AfterEach
    void cleanUp() {
        redis.close();
        RedisSupport.deleteKeys(prefix);
    }
}
