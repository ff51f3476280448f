package dev.fenceguard.redis;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendProperties;
import dev.fenceguard.testkit.servers.TestRedis;
import net.jqwik.api.lifecycle.AfterContainer;

/** Stateful chains on standalone Redis against the reference model. */
class RedisStandaloneBackendProperties extends LockBackendProperties {

    private static final String PREFIX = TestRedis.keyPrefix("props");
    private static final FenceGuardRedis REDIS = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(PREFIX).build();

    @AfterContainer
    static void cleanUp() {
        REDIS.close();
        RedisSupport.deleteKeys(PREFIX);
    }

    @Override
    protected LockBackend backend() {
        return REDIS.lockBackend();
    }
}
