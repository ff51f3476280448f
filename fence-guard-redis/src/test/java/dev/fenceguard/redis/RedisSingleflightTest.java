package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.SingleflightContract;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Singleflight on Redis, standalone, through Sentinel and on a 3-master Cluster: the contract, with pub/sub for waiters. */
class RedisSingleflightTest {

    private static final String PREFIX = TestRedis.keyPrefix("singleflight");

    @AfterAll
    static void cleanUp() {
        RedisSupport.deleteKeys(PREFIX);
    }

    abstract static class OnRedis extends SingleflightContract {
        private FenceGuardRedis locks;

        abstract FenceGuardRedis openLocks();

        abstract RedisFlightStore.Builder stores();

        @Override
        protected LockBackend lockBackend() {
            if (locks == null) {
                locks = openLocks();
            }
            return locks.lockBackend();
        }

        @Override
        protected FlightStore newStore() {
            return stores().withKeyPrefix(PREFIX + "sf:").build();
        }

        @AfterEach
        void close() {
            if (locks != null) {
                locks.close();
            }
        }
    }

    @Nested
    class Standalone extends OnRedis {
        @Override
        FenceGuardRedis openLocks() {
            return FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(PREFIX + "lock:").build();
        }

        @Override
        RedisFlightStore.Builder stores() {
            return RedisFlightStore.builder(RedisSupport.shared());
        }

        @Test
        void theDocumentedKeysHoldTheFlightsFenceAndTheResultWithItsRetention() throws Exception {
            try (RedisFlightStore store = stores().withKeyPrefix(PREFIX + "layout:").build();
                    StatefulRedisConnection<String, String> c = RedisSupport.shared().connect()) {
                LockKey k = LockKey.of("a{b}%");
                store.begin(k, 41, Duration.ofSeconds(5)).toCompletableFuture().get();
                store.publish(k, 41, new byte[] {1, 2, 3}, Duration.ofMinutes(1), Duration.ofSeconds(5)).toCompletableFuture().get();
                // The stored layout is a compatibility promise (docs/singleflight.md): this test pins it.
                String tag = PREFIX + "layout:{a%7Bb%7D%25}";
                assertThat(c.sync().get(tag + ":flight")).isEqualTo("41");
                assertThat(c.sync().get(tag + ":result")).isEqualTo("41:AQID");
                assertThat(c.sync().pttl(tag + ":result")).isBetween(1L, 60_000L);
                assertThat(c.sync().pttl(tag + ":flight")).as("kept: a zombie is refused after the result expired").isEqualTo(-1L);
            }
        }

        @Test
        void fencedWritesToldOfTheStoresPrefixRefuseItsKeys() {
            try (FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(PREFIX + "lock:")
                    .withFenceKeyPrefix(PREFIX + "fence:").withOtherLockKeyPrefixes(PREFIX + "sf:").build()) {
                assertThatThrownBy(() -> redis.fencedWrites().set(PREFIX + "sf:{k}:flight", "1", dev.fenceguard.core.FenceToken.of(9)))
                        .as("a fenced write could rewind a flight's fence").isInstanceOf(IllegalArgumentException.class);
            }
        }

        @Test
        void anUnreachableServerIsReportedAsUnavailable() {
            io.lettuce.core.RedisClient nowhere = io.lettuce.core.RedisClient.create("redis://127.0.0.1:1");
            try {
                assertThatThrownBy(() -> RedisFlightStore.builder(nowhere).build()).isInstanceOfSatisfying(
                        dev.fenceguard.core.FenceGuardException.class,
                        e -> assertThat(e.code()).isEqualTo(dev.fenceguard.core.ErrorCode.UNAVAILABLE));
            } finally {
                nowhere.shutdown();
            }
        }

        @Test
        void badPrefixesAreRefusedBeforeConnecting() {
            assertThatThrownBy(() -> RedisFlightStore.builder(RedisSupport.shared()).withKeyPrefix("a{b")).hasMessageContaining("'{'");
            assertThatThrownBy(() -> RedisFlightStore.builder((io.lettuce.core.RedisClient) null)).isInstanceOf(NullPointerException.class);
        }
    }

    @Nested
    class Cluster extends OnRedis {
        @Override
        FenceGuardRedis openLocks() {
            return FenceGuardRedis.builder(RedisSupport.cluster()).withKeyPrefix(PREFIX + "lock:").build();
        }

        @Override
        RedisFlightStore.Builder stores() {
            return RedisFlightStore.builder(RedisSupport.cluster());
        }
    }

    @Nested
    class Sentinel extends OnRedis {
        @Override
        FenceGuardRedis openLocks() {
            return FenceGuardRedis.builder(RedisSupport.sentinel()).withKeyPrefix(PREFIX + "lock:").build();
        }

        @Override
        RedisFlightStore.Builder stores() {
            return RedisFlightStore.builder(RedisSupport.sentinel());
        }
    }
}
