package dev.fenceguard.redis;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendProperties;
import net.jqwik.api.lifecycle.AfterContainer;

/** Stateful chains on a private 3-master Redis Cluster against the reference model. */
class RedisClusterBackendProperties extends LockBackendProperties {

    private static final FenceGuardRedis REDIS = FenceGuardRedis.builder(RedisSupport.cluster()).build();

    @AfterContainer
    static void close() {
        REDIS.close();
    }

    @Override
    protected LockBackend backend() {
        return REDIS.lockBackend();
    }
}
