package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyState;
import dev.fenceguard.testkit.IdempotencyBackendContract;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The idempotency contract on Redis: standalone, through Sentinel and on a 3-master Cluster; the stored hash, pinned. */
class RedisIdempotencyContractTest {

    private static final String PREFIX = TestRedis.keyPrefix("idem");

    @AfterAll
    static void cleanUp() {
        RedisSupport.deleteKeys(PREFIX);
    }

    abstract static class OnRedis extends IdempotencyBackendContract {
        FenceGuardRedis redis;

        abstract FenceGuardRedis open();

        @Override
        protected IdempotencyBackend backend() {
            if (redis == null) {
                redis = open();
            }
            return redis.idempotencyBackend();
        }

        @Override
        protected boolean purgeDeletes() {
            return false; // entries expire by themselves
        }

        @AfterEach
        void close() {
            if (redis != null) {
                redis.close();
            }
        }
    }

    @Nested
    class Standalone extends OnRedis {
        @Override
        FenceGuardRedis open() {
            return FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(PREFIX).build();
        }

        @Test
        void theEntryIsOneHashInTheLocksSlotThatExpiresAtItsRetention() {
            RedisIdempotencyBackend b = (RedisIdempotencyBackend) backend();
            String name = "layout:{order}:42";
            LockKey key = LockKey.of(name);
            Duration d = Duration.ofSeconds(30);
            b.claim(key, "ab12", 7, d, Duration.ofSeconds(60), d).toCompletableFuture().join();
            b.record(key, 7, IdempotencyState.COMPLETED, new byte[] {1, 2}, Duration.ofSeconds(60), d).toCompletableFuture().join();

            String entry = b.entryKeyOf(name);
            assertThat(entry).isEqualTo(PREFIX + "{layout:%7Border%7D:42}:idem");
            assertThat(SlotHash.getSlot(entry)).isEqualTo(SlotHash.getSlot(redis.lockBackend().lockKeyOf(name)));
            try (StatefulRedisConnection<String, String> c = RedisSupport.shared().connect()) {
                Map<String, String> hash = c.sync().hgetall(entry);
                assertThat(hash).containsOnlyKeys("s", "fp", "f", "e", "r", "v");
                assertThat(hash).containsEntry("s", "C").containsEntry("fp", "ab12").containsEntry("f", "7").containsEntry("v", "AQI=");
                assertThat(Long.parseLong(hash.get("r")) - Long.parseLong(hash.get("e"))).isEqualTo(60_000);
                long pttl = c.sync().pttl(entry);
                assertThat(pttl).isBetween(1L, 60_000L);
            }
        }
    }

    @Test
    void fencedWritesRefuseTheEntriesKeysBeforeAnyIo() {
        try (FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(PREFIX).build()) {
            String entry = redis.idempotencyBackend().entryKeyOf("charge:42");
            assertThatThrownBy(() -> redis.fencedWrites().set(entry, dev.fenceguard.core.FenceToken.of(99), "forged"))
                    .as("a fenced write that would forge a recorded outcome").isInstanceOf(IllegalArgumentException.class);
            try (StatefulRedisConnection<String, String> c = RedisSupport.shared().connect()) {
                assertThat(c.sync().exists(entry)).isZero();
            }
        }
    }

    @Nested
    class Cluster extends OnRedis {
        @Override
        FenceGuardRedis open() {
            return FenceGuardRedis.builder(RedisSupport.cluster()).withKeyPrefix(PREFIX).build();
        }
    }

    @Nested
    class Sentinel extends OnRedis {
        @Override
        FenceGuardRedis open() {
            return FenceGuardRedis.builder(RedisSupport.sentinel()).withKeyPrefix(PREFIX).build();
        }
    }
}
