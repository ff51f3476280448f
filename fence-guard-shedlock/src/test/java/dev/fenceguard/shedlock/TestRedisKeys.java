package dev.fenceguard.shedlock;

import dev.fenceguard.redis.FenceGuardRedis;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;

/** Every key of a test under one prefix of its own, and their removal afterwards. */
final class TestRedisKeys {
    private TestRedisKeys() {}

    /** A FenceGuardRedis whose lock, fence and flight keys all start with {@code prefix}. */
    static FenceGuardRedis.Builder builder(RedisClient client, String prefix) {
        return FenceGuardRedis.builder(client).withKeyPrefix(prefix + "lock:").withFenceKeyPrefix(prefix + "fence:")
                .withFlightKeyPrefix(prefix + "flight:");
    }

    /** Deletes the keys starting with {@code prefix} (a prefix of {@code TestRedis.keyPrefix}: no glob characters). */
    static void delete(RedisClient client, String prefix) {
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                KeyScanCursor<String> page = c.sync().scan(cursor, ScanArgs.Builder.matches(prefix + "*").limit(500));
                if (!page.getKeys().isEmpty()) {
                    c.sync().del(page.getKeys().toArray(String[]::new));
                }
                cursor = page;
            } while (!cursor.isFinished());
        }
    }
}
