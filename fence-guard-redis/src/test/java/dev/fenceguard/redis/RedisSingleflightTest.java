package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.SingleflightContract;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Singleflight on Redis, standalone, through Sentinel and on a 3-master Cluster: the contract over the
 * flight store of {@link FenceGuardRedis}, with pub/sub for waiters (one entry per simulated process).
 */
class RedisSingleflightTest {

    private static final String PREFIX = TestRedis.keyPrefix("singleflight");

    @AfterAll
    static void cleanUp() {
        RedisSupport.deleteKeys(PREFIX);
    }

    abstract static class OnRedis extends SingleflightContract {
        private final List<FenceGuardRedis> opened = new ArrayList<>();
        private FenceGuardRedis locks;

        /** The entry's builder on this topology's client. */
        abstract FenceGuardRedis.Builder entry();

        /** An entry whose locks and flights live under this test's prefixes: one per simulated process. */
        final FenceGuardRedis open(String flightPrefix) {
            FenceGuardRedis redis = entry().withKeyPrefix(PREFIX + "lock:").withFlightKeyPrefix(flightPrefix).build();
            opened.add(redis);
            return redis;
        }

        @Override
        protected LockBackend lockBackend() {
            if (locks == null) {
                locks = open(PREFIX + "sf:");
            }
            return locks.lockBackend();
        }

        @Override
        protected FlightStore newStore() {
            return open(PREFIX + "sf:").flightStore();
        }

        @AfterEach
        void close() {
            opened.forEach(FenceGuardRedis::close);
        }
    }

    @Nested
    class Standalone extends OnRedis {
        @Override
        FenceGuardRedis.Builder entry() {
            return FenceGuardRedis.builder(RedisSupport.shared());
        }

        @Test
        void theDocumentedKeysHoldTheFlightsFenceAndTheResultWithItsRetention() throws Exception {
            RedisFlightStore store = open(PREFIX + "layout:").flightStore();
            try (StatefulRedisConnection<String, String> c = RedisSupport.shared().connect()) {
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
        void theFencedWritesOfTheSameEntryRefuseTheFlightStoresKeys() {
            FenceGuardRedis redis = open(PREFIX + "sf:");
            assertThatThrownBy(() -> redis.fencedWrites().set(PREFIX + "sf:{k}:flight", FenceToken.of(9), "1"))
                    .as("a fenced write could rewind a flight's fence")
                    .hasMessage("key '" + PREFIX + "sf:{k}:flight' is in fence-guard's own key space: keys starting with '" + PREFIX
                            + "sf:{' belong to the flight store with key prefix '" + PREFIX + "sf:', and writing one could rewind a "
                            + "flight's fence or replace its result");
        }

        @Test
        void anEntryBuiltFromAConnectionHasAFlightStoreWhoseWaitersPoll() throws Exception {
            try (StatefulRedisConnection<String, String> c = RedisSupport.shared().connect();
                    FenceGuardRedis redis = FenceGuardRedis.builder(c).withKeyPrefix(PREFIX + "lock:")
                            .withFlightKeyPrefix(PREFIX + "conn:").build()) {
                RedisFlightStore store = redis.flightStore();
                LockKey k = LockKey.of("on a connection");
                assertThat(store.begin(k, 7, Duration.ofSeconds(5)).toCompletableFuture().get()).isInstanceOf(FlightStore.FlightStart.Started.class);
                store.publish(k, 7, new byte[] {9}, Duration.ofMinutes(1), Duration.ofSeconds(5)).toCompletableFuture().get().orThrow();
                assertThat(store.read(k, Duration.ofSeconds(5)).toCompletableFuture().get()).hasValueSatisfying(r -> {
                    assertThat(r.fence()).isEqualTo(7);
                    assertThat(r.value()).containsExactly(9);
                });
                assertThatThrownBy(() -> store.watch(k, () -> { }).toCompletableFuture().get())
                        .as("no client to open a pub/sub connection with: the caller polls")
                        .cause().isInstanceOfSatisfying(FenceGuardException.class, e -> {
                            assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
                            assertThat(e).hasMessageContaining("built from a connection");
                        });
                assertThat(c.isOpen()).as("the entry never closes a connection it was given").isTrue();
            }
        }

        @Test
        void badFlightPrefixesAreRefusedBeforeConnecting() {
            FenceGuardRedis.Builder b = entry().withKeyPrefix(PREFIX + "lock:").withFenceKeyPrefix(PREFIX + "fence:");
            assertThatThrownBy(() -> b.withFlightKeyPrefix("a{b")).hasMessageContaining("'{'");
            assertThatThrownBy(() -> b.withFlightKeyPrefix(PREFIX + "lock:").build())
                    .hasMessage("flight key prefix '" + PREFIX + "lock:' must differ from the fence key prefix '" + PREFIX
                            + "fence:' and from every lock key prefix [" + PREFIX + "lock:]: a flight's keys could then be a lock's "
                            + "keys or a resource's fence key");
            assertThatThrownBy(() -> b.withFlightKeyPrefix(PREFIX + "fence:").build()).as("the fence key prefix")
                    .hasMessageContaining("must differ from the fence key prefix");
        }
    }

    @Nested
    class Cluster extends OnRedis {
        @Override
        FenceGuardRedis.Builder entry() {
            return FenceGuardRedis.builder(RedisSupport.cluster());
        }
    }

    @Nested
    class Sentinel extends OnRedis {
        @Override
        FenceGuardRedis.Builder entry() {
            return FenceGuardRedis.builder(RedisSupport.sentinel());
        }
    }
}
