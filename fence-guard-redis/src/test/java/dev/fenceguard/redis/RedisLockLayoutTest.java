package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.RedisServers;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The lock key's stored form (value {@code <lock id>:<fence>:<expiry ms>}, expiring at that instant),
 * what a release does with another holder's lock, locks taken by builds before 0.3, and the number of
 * Redis commands an acquire and a release cost.
 */
class RedisLockLayoutTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    @Test
    void theLockValueRecordsItsFenceAndTheExpiryItHasOnTheServer() {
        String prefix = TestRedis.keyPrefix("layout");
        try (FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(prefix).build();
                StatefulRedisConnection<String, String> admin = RedisSupport.shared().connect()) {
            BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
            LockId id = LockId.random();
            Grant grant = locks.tryAcquire(LockKey.of("orders:1"), id, TTL).orElseThrow();
            String lockKey = redis.lockBackend().lockKeyOf("orders:1");
            long expiry = grant.expiresAt().toEpochMilli();
            assertThat(admin.sync().get(lockKey)).isEqualTo(id.value() + ":" + grant.fence() + ":" + expiry);
            assertThat(admin.sync().pexpiretime(lockKey)).as("the key expires at the instant the grant reports").isEqualTo(expiry);
            assertThat(admin.sync().get(redis.lockBackend().fenceKeyOf("orders:1"))).isEqualTo(Long.toString(grant.fence()));

            Instant extended = locks.extend(LockKey.of("orders:1"), id, Duration.ofSeconds(60)).orElseThrow();
            assertThat(admin.sync().get(lockKey)).isEqualTo(id.value() + ":" + grant.fence() + ":" + extended.toEpochMilli());
            assertThat(admin.sync().pexpiretime(lockKey)).isEqualTo(extended.toEpochMilli());
            assertThat(locks.lookup(LockKey.of("orders:1"))).contains(new LockInfo(LockKey.of("orders:1"), FenceToken.of(grant.fence()), extended));
        } finally {
            RedisSupport.deleteKeys(prefix);
        }
    }

    @Test
    void aReleaseThatFindsAnotherHoldersLockLeavesItExactlyAsItWas() {
        String prefix = TestRedis.keyPrefix("layout");
        try (FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(prefix).build();
                StatefulRedisConnection<String, String> admin = RedisSupport.shared().connect()) {
            BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
            LockKey key = LockKey.of("orders:2");
            LockId holder = LockId.random();
            Grant grant = locks.tryAcquire(key, holder, TTL).orElseThrow();
            String lockKey = redis.lockBackend().lockKeyOf(key.value());
            String value = admin.sync().get(lockKey);
            long expiresAt = admin.sync().pexpiretime(lockKey);

            assertThat(locks.release(key, LockId.random())).as("a zombie's release").isFalse();

            assertThat(admin.sync().get(lockKey)).isEqualTo(value);
            assertThat(admin.sync().pexpiretime(lockKey)).isEqualTo(expiresAt);
            assertThat(locks.tryAcquire(key, LockId.random(), TTL)).as("still held").isEmpty();
            assertThat(locks.release(key, holder)).isTrue();
            assertThat(admin.sync().exists(lockKey)).isZero();
            assertThat(locks.tryAcquire(key, LockId.random(), TTL).orElseThrow().fence()).isGreaterThan(grant.fence());
        } finally {
            RedisSupport.deleteKeys(prefix);
        }
    }

    @Test
    void aLockTakenByAnEarlierBuildIsReadReleasedAndKeptExclusive() {
        // Before 0.3 the value was '<lock id>:<fence>' with a PX expiry; such a lock may be live during an upgrade.
        String prefix = TestRedis.keyPrefix("layout");
        try (FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(prefix).build();
                StatefulRedisConnection<String, String> admin = RedisSupport.shared().connect()) {
            BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
            LockKey key = LockKey.of("orders:3");
            LockId earlier = LockId.random();
            String lockKey = redis.lockBackend().lockKeyOf(key.value());
            admin.sync().set(redis.lockBackend().fenceKeyOf(key.value()), "41");
            admin.sync().set(lockKey, earlier.value() + ":41", SetArgs.Builder.px(TTL.toMillis()));

            LockInfo info = locks.lookup(key).orElseThrow();
            assertThat(info.fence()).isEqualTo(FenceToken.of(41));
            assertThat(info.expiresAt()).isAfter(Instant.now().plus(TTL).minusSeconds(10));
            assertThat(locks.tryAcquire(key, LockId.random(), TTL)).as("held by the earlier build").isEmpty();

            assertThat(locks.release(key, LockId.random())).isFalse();
            assertThat(admin.sync().get(lockKey)).isEqualTo(earlier.value() + ":41");
            assertThat(admin.sync().pttl(lockKey)).as("kept, for longer rather than shorter than its lease")
                    .isGreaterThan(TTL.toMillis()).isLessThanOrEqualTo(RedisLockBackend.LEGACY_RESTORE_MILLIS);

            assertThat(locks.release(key, earlier)).as("its holder's release").isTrue();
            assertThat(locks.tryAcquire(key, LockId.random(), TTL).orElseThrow().fence()).isGreaterThan(41);
        } finally {
            RedisSupport.deleteKeys(prefix);
        }
    }

    @Test
    void aClockFlooredKeyWhoseCounterIsExhaustedFailsAndLeavesBothKeysAsTheyWere() {
        String prefix = TestRedis.keyPrefix("layout");
        try (FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(prefix).build();
                StatefulRedisConnection<String, String> admin = RedisSupport.shared().connect()) {
            RedisLockBackend backend = redis.lockBackend();
            String max = Long.toString(FenceToken.MAX_VALUE);
            admin.sync().set(backend.fenceKeyOf("old"), max);
            assertThatThrownBy(() -> BlockingBackend.of(backend).tryAcquire(LockKey.of("old"), LockId.random(), TTL))
                    .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FENCE_EXHAUSTED));
            assertThat(admin.sync().exists(backend.lockKeyOf("old"))).as("no lock").isZero();
            assertThat(admin.sync().get(backend.fenceKeyOf("old"))).as("the counter as it was").isEqualTo(max);
        } finally {
            RedisSupport.deleteKeys(prefix);
        }
    }

    @Test
    void aCounterThatIsNotANumberFailsTheAcquireAndIsLeftAsItWas() {
        String prefix = TestRedis.keyPrefix("layout");
        try (FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(prefix).build();
                StatefulRedisConnection<String, String> admin = RedisSupport.shared().connect()) {
            RedisLockBackend backend = redis.lockBackend();
            admin.sync().set(backend.fenceKeyOf("garbled"), "not a number");
            assertThatThrownBy(() -> BlockingBackend.of(backend).tryAcquire(LockKey.of("garbled"), LockId.random(), TTL))
                    .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.getMessage()).contains("does not hold a number"));
            assertThat(admin.sync().exists(backend.lockKeyOf("garbled"))).as("no lock").isZero();
            assertThat(admin.sync().get(backend.fenceKeyOf("garbled"))).isEqualTo("not a number");
        } finally {
            RedisSupport.deleteKeys(prefix);
        }
    }

    @Test
    void anAcquireAndAReleaseTakeSixRedisCommandsWithTheClockFloor() {
        // A private server, so that no other client's commands are counted. EVALSHA counts, and so does
        // every command a script runs.
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build();
                    StatefulRedisConnection<String, String> admin = client.connect()) {
                BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
                LockKey key = LockKey.of("orders:4");
                LockId first = LockId.random();
                locks.tryAcquire(key, first, TTL).orElseThrow(); // the first use of a key waits a tick for its floor
                locks.release(key, first);

                Map<String, Long> before = commandCounts(admin.sync());
                int pairs = 200;
                for (int i = 0; i < pairs; i++) {
                    LockId id = LockId.random();
                    locks.tryAcquire(key, id, TTL).orElseThrow();
                    assertThat(locks.release(key, id)).isTrue();
                }
                Map<String, Long> spent = delta(before, commandCounts(admin.sync()));
                // Two pairs within one 10 us tick would wait for the next tick (extra TIMEs); a pair takes
                // far longer than a tick here, but the bound allows for it rather than assume it.
                assertThat(spent).containsEntry("evalsha", 2L * pairs).containsEntry("set", 2L * pairs)
                        .containsEntry("getdel", (long) pairs);
                assertThat(spent.get("time")).isBetween((long) pairs, (long) pairs + 5);
                assertThat(spent.keySet()).containsOnly("evalsha", "set", "getdel", "time");
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void aHeldKeyCostsTheAcquireNoWrite() {
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try (FenceGuardRedis redis = FenceGuardRedis.builder(client).withFenceStrategy(FenceStrategy.CLOCK_FLOORED).build();
                    StatefulRedisConnection<String, String> admin = client.connect()) {
                BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
                LockKey key = LockKey.of("orders:5");
                locks.tryAcquire(key, LockId.random(), TTL).orElseThrow();
                String counter = admin.sync().get(redis.lockBackend().fenceKeyOf(key.value()));
                Map<String, Long> before = commandCounts(admin.sync());
                assertThat(locks.tryAcquire(key, LockId.random(), TTL)).isEmpty();
                assertThat(delta(before, commandCounts(admin.sync()))).containsOnly(Map.entry("evalsha", 1L), Map.entry("time", 1L),
                        Map.entry("set", 1L)); // the SET NX that found the lock
                assertThat(admin.sync().get(redis.lockBackend().fenceKeyOf(key.value()))).isEqualTo(counter);
            } finally {
                client.shutdown();
            }
        }
    }

    /** Calls per command from INFO commandstats (INFO itself left out). */
    private static Map<String, Long> commandCounts(RedisCommands<String, String> redis) {
        Map<String, Long> counts = new TreeMap<>();
        redis.info("commandstats").lines().filter(l -> l.startsWith("cmdstat_")).forEach(l -> {
            String name = l.substring("cmdstat_".length(), l.indexOf(':'));
            int at = l.indexOf("calls=") + "calls=".length();
            counts.put(name, Long.parseLong(l.substring(at, l.indexOf(',', at))));
        });
        counts.remove("info");
        return counts;
    }

    private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> delta = new TreeMap<>();
        after.forEach((name, calls) -> {
            long d = calls - before.getOrDefault(name, 0L);
            if (d > 0) {
                delta.put(name, d);
            }
        });
        return delta;
    }
}
