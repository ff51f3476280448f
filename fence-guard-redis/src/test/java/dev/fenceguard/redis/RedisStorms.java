package dev.fenceguard.redis;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.redis.internal.RedisErrors;
import dev.fenceguard.testkit.ZombieStorm;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisStringCommands;
import java.net.URI;
import java.time.Duration;

/** Pieces shared by the Redis storms. */
final class RedisStorms {

    /** Lease TTL of the storms: a stalled holder blocks the lock for about this long. */
    static final Duration TTL = Duration.ofMillis(100);

    /** Lettuce's command timeout in the fault storms: every call ends well within the storm's call timeout. */
    static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

    private RedisStorms() {}

    /** {@code uri} with the fault storms' command timeout. */
    static RedisURI uri(URI uri) {
        RedisURI r = RedisURI.create(uri);
        r.setTimeout(COMMAND_TIMEOUT);
        return r;
    }

    /**
     * Sets {@code key} to 0 and returns it as the storm's resource: claim and SET through
     * {@link FencedRedis}; the read is the test's own GET, its errors mapped as fence-guard maps them
     * (a user's repository maps its own).
     */
    static ZombieStorm.FencedCounter counter(FencedRedis fenced, RedisStringCommands<String, String> commands, String key) {
        commands.set(key, "0"); // the counter exists before the storm: a claim of an absent key may answer NotFound
        return new ZombieStorm.FencedCounter() {
            @Override
            public WriteOutcome claim(FenceToken fence) {
                return fenced.claim(key, fence);
            }

            @Override
            public long read() {
                try {
                    String v = commands.get(key);
                    return v == null ? 0 : Long.parseLong(v);
                } catch (RedisException e) {
                    throw RedisErrors.map(e, key, "read");
                }
            }

            @Override
            public WriteOutcome write(long value, FenceToken fence) {
                return fenced.set(key, fence, Long.toString(value));
            }
        };
    }

    /** A storm of the given size on {@code backend} (fast retries: a free lock is taken at once). */
    static ZombieStorm.Builder storm(RedisLockBackend backend, String lockKey, ZombieStorm.FencedCounter counter, int attempts) {
        LockClient locks = LockClient.builder(backend).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(1), Duration.ofMillis(50)).build();
        return ZombieStorm.builder(locks, lockKey, counter).withAttempts(attempts).withTtl(TTL)
                .withCallTimeout(Duration.ofSeconds(15));
    }
}
