package dev.fenceguard.redis;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LeaderElectionContract;
import java.util.UUID;

/** Leader election on the shared Redis, the leaders' writes fenced by {@link FencedRedis}. */
class RedisLeaderElectionTest extends LeaderElectionContract {

    private final String prefix = "fg-test:election:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    private final FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared())
            .withKeyPrefix(prefix + "lock:").withFenceKeyPrefix(prefix + "fence:").withMetrics(LockMetrics.none()).build();

    @Override
    protected LockBackend backend() {
        return redis.lockBackend();
    }

    @Override
    protected WriteOutcome write(String resource, FenceToken term) {
        return redis.fencedWrites().set(prefix + resource, term, "written in term " + term.value());
    }

    @Override
    protected void cleanUp() {
        redis.close();
        RedisSupport.deleteKeys(prefix);
    }
}
