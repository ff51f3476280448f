package dev.fenceguard.redis;

import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.testkit.IdempotencyBackendProperties;
import dev.fenceguard.testkit.servers.TestRedis;
import net.jqwik.api.lifecycle.AfterContainer;

/** Claim/record/lookup sequences on the shared standalone Redis against the reference model. */
class RedisIdempotencyProperties extends IdempotencyBackendProperties {

    private static final String PREFIX = TestRedis.keyPrefix("idemprops");
    private static final FenceGuardRedis REDIS = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(PREFIX).build();

    @AfterContainer
    static void cleanUp() {
        REDIS.close();
        RedisSupport.deleteKeys(PREFIX);
    }

    @Override
    protected IdempotencyBackend backend() {
        return REDIS.idempotencyBackend();
    }
}
