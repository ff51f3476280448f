package dev.fenceguard.reactor;

import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;

/** The Mono face on the real Redis server (Lettuce completes its calls on Netty event loops). */
class RedisReactiveTest extends ReactiveLockContract {

    private static final String PREFIX = TestRedis.keyPrefix("reactor");
    private static final RedisClient CLIENT = RedisClient.create(RedisURI.create(TestRedis.server().uri()));
    private static final FenceGuardRedis REDIS = FenceGuardRedis.builder(CLIENT).withKeyPrefix(PREFIX).build();
    private static final FlightStore FLIGHTS = REDIS.flightStore();

    @AfterAll
    static void cleanUp() {
        REDIS.close();
        // Deletes only this class's keys: the server is shared.
        try (StatefulRedisConnection<String, String> c = CLIENT.connect()) {
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                KeyScanCursor<String> page = c.sync().scan(cursor, ScanArgs.Builder.matches(PREFIX.replaceAll("([*?\\[\\]\\\\])", "\\\\$1") + "*"));
                if (!page.getKeys().isEmpty()) {
                    c.sync().del(page.getKeys().toArray(String[]::new));
                }
                cursor = page;
            } while (!cursor.isFinished());
        } finally {
            CLIENT.shutdown();
        }
    }

    @Override
    LockBackend backend() {
        return REDIS.lockBackend();
    }

    /** The primitives' Mono faces on Redis: its lock backend, idempotency backend and flight store. */
    @Nested
    class Primitives extends ReactivePrimitivesContract {
        @Override
        LockBackend lockBackend() {
            return REDIS.lockBackend();
        }

        @Override
        IdempotencyBackend idempotencyBackend() {
            return REDIS.idempotencyBackend();
        }

        @Override
        FlightStore flightStore() {
            return REDIS.flightStore();
        }
    }
}
