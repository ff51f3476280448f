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

/**
 * The fenced-resource template on FencedRedis {@code set} (which creates) and {@code delete} over real
 * Redis; one subclass per face of the writes, each with a fixture of its own.
 */
abstract class RedisFencedResources extends FencedResourceProperties {

    /**
     * A key prefix, a connection and the writes on it; one per subclass, held in its static field and
     * closed by its own {@code @AfterContainer}, since jqwik makes an instance per property and runs
     * container hooks statically (so the two subclasses repeat those few lines).
     */
    record Fixture(String prefix, StatefulRedisConnection<String, String> conn, FenceGuardRedis redis) {

        static Fixture open(String name) {
            String prefix = TestRedis.keyPrefix(name);
            StatefulRedisConnection<String, String> conn = RedisSupport.shared().connect();
            return new Fixture(prefix, conn, FenceGuardRedis.builder(conn).withFenceKeyPrefix(prefix + "fence:")
                    .withMetrics(LockMetrics.none()).build());
        }

        void close() {
            redis.close();
            conn.close();
            RedisSupport.deleteKeys(prefix);
        }
    }

    private final Fixture fixture;

    RedisFencedResources(Fixture fixture) {
        this.fixture = fixture;
    }

    /** The face under test: a fenced {@code SET}. */
    abstract WriteOutcome faceSet(FencedRedis writes, String key, String value, FenceToken fence);

    /** The face under test: a fenced delete. */
    abstract WriteOutcome faceDelete(FencedRedis writes, String key, FenceToken fence);

    @Override
    protected void create(String id) {
        fixture.conn().sync().set(fixture.prefix() + id, initialValue());
    }

    @Override
    protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
        return faceSet(fixture.redis().fencedWrites(), fixture.prefix() + id, value, fence);
    }

    @Override
    protected WriteOutcome delete(String id, FenceToken fence, Pause pause) {
        return faceDelete(fixture.redis().fencedWrites(), fixture.prefix() + id, fence);
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
        return Optional.ofNullable(fixture.conn().sync().get(fixture.prefix() + id));
    }
}
