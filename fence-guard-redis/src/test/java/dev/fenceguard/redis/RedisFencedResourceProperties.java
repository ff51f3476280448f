package dev.fenceguard.redis;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.FencedResourceProperties;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import net.jqwik.api.lifecycle.AfterContainer;

/** The fenced-resource template on FencedRedis set (which creates) and delete over real Redis. */
class RedisFencedResourceProperties extends FencedResourceProperties {

    private static final String PREFIX = TestRedis.keyPrefix("resprops");
    private static final StatefulRedisConnection<String, String> CONN = RedisSupport.shared().connect();
    private static final FencedRedis FENCED = FencedRedis.builder(CONN).withFenceKeyPrefix(PREFIX + "fence:")
            .withMetrics(LockMetrics.none()).build();

    @AfterContainer
    static void cleanUp() {
        CONN.close();
        RedisSupport.deleteKeys(PREFIX);
    }

    @Override
    protected void create(String id) {
        CONN.sync().set(PREFIX + id, initialValue());
    }

    @Override
    protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
        return FENCED.set(PREFIX + id, value, fence);
    }

    @Override
    protected WriteOutcome delete(String id, FenceToken fence, Pause pause) {
        return FENCED.delete(PREFIX + id, fence);
    }

    @Override
    protected Set<Operation> operations() {
        return EnumSet.of(Operation.WRITE, Operation.DELETE);
    }

    @Override
    protected boolean writeCreates() {
        return true;
    }

    @Override
    protected Optional<String> read(String id) {
        return Optional.ofNullable(CONN.sync().get(PREFIX + id));
    }
}
