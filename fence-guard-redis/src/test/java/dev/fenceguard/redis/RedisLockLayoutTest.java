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
import dev.fenceguard.core.internal.ClockFloor;
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
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The lock key's stored form (value {@code <lock id>:<fence>:<expiry ms>}, expiring at that instant),
 * what a release does with another holder's lock, locks taken by builds before 0.3, when a fence counter
 * expires, and the number of Redis commands an acquire and a release cost.
 */
class RedisLockLayoutTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    @Test
    void theLockValueRecordsItsFenceAndTheExpiryItHasOnTheServer() {
        onSharedServer((redis, admin) -> {
            BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
            LockId id = LockId.random();
            Grant grant = locks.tryAcquire(LockKey.of("orders:1"), id, TTL).orElseThrow();
            String lockKey = redis.lockBackend().lockKeyOf("orders:1");
            long expiry = grant.expiresAt().toEpochMilli();
            assertThat(admin.get(lockKey)).isEqualTo(id.value() + ":" + grant.fence() + ":" + expiry);
            assertThat(admin.pexpiretime(lockKey)).as("the key expires at the instant the grant reports").isEqualTo(expiry);
            assertThat(admin.get(redis.lockBackend().fenceKeyOf("orders:1"))).isEqualTo(Long.toString(grant.fence()));

            Instant extended = locks.extend(LockKey.of("orders:1"), id, Duration.ofSeconds(60)).orElseThrow();
            assertThat(admin.get(lockKey)).isEqualTo(id.value() + ":" + grant.fence() + ":" + extended.toEpochMilli());
            assertThat(admin.pexpiretime(lockKey)).isEqualTo(extended.toEpochMilli());
            assertThat(locks.lookup(LockKey.of("orders:1"))).contains(new LockInfo(LockKey.of("orders:1"), FenceToken.of(grant.fence()), extended));
        });
    }

    @Test
    void aReleaseThatFindsAnotherHoldersLockLeavesItExactlyAsItWas() {
        onSharedServer((redis, admin) -> {
            BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
            LockKey key = LockKey.of("orders:2");
            LockId holder = LockId.random();
            Grant grant = locks.tryAcquire(key, holder, TTL).orElseThrow();
            String lockKey = redis.lockBackend().lockKeyOf(key.value());
            String value = admin.get(lockKey);
            long expiresAt = admin.pexpiretime(lockKey);

            assertThat(locks.release(key, LockId.random())).as("a zombie's release").isFalse();

            assertThat(admin.get(lockKey)).isEqualTo(value);
            assertThat(admin.pexpiretime(lockKey)).isEqualTo(expiresAt);
            assertThat(locks.tryAcquire(key, LockId.random(), TTL)).as("still held").isEmpty();
            assertThat(locks.release(key, holder)).isTrue();
            assertThat(admin.exists(lockKey)).isZero();
            assertThat(locks.tryAcquire(key, LockId.random(), TTL).orElseThrow().fence()).isGreaterThan(grant.fence());
        });
    }

    @Test
    void aLockTakenByAnEarlierBuildIsReadReleasedAndKeptExclusive() {
        // Before 0.3 the value was '<lock id>:<fence>' with a PX expiry; such a lock may be live during an upgrade.
        onSharedServer((redis, admin) -> {
            BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
            LockKey key = LockKey.of("orders:3");
            LockId earlier = LockId.random();
            String lockKey = redis.lockBackend().lockKeyOf(key.value());
            admin.set(redis.lockBackend().fenceKeyOf(key.value()), "41");
            admin.set(lockKey, earlier.value() + ":41", SetArgs.Builder.px(TTL.toMillis()));

            LockInfo info = locks.lookup(key).orElseThrow();
            assertThat(info.fence()).isEqualTo(FenceToken.of(41));
            assertThat(info.expiresAt()).isAfter(Instant.now().plus(TTL).minusSeconds(10));
            assertThat(locks.tryAcquire(key, LockId.random(), TTL)).as("held by the earlier build").isEmpty();

            assertThat(locks.release(key, LockId.random())).isFalse();
            assertThat(admin.get(lockKey)).isEqualTo(earlier.value() + ":41");
            assertThat(admin.pttl(lockKey)).as("kept, for longer rather than shorter than its lease")
                    .isGreaterThan(TTL.toMillis()).isLessThanOrEqualTo(RedisLockBackend.LEGACY_RESTORE_MILLIS);

            assertThat(locks.release(key, earlier)).as("its holder's release").isTrue();
            assertThat(locks.tryAcquire(key, LockId.random(), TTL).orElseThrow().fence()).isGreaterThan(41);
        });
    }

    @Test
    void aClockFlooredKeyWhoseCounterIsExhaustedFailsAndLeavesBothKeysAsTheyWere() {
        onSharedServer((redis, admin) -> {
            RedisLockBackend backend = redis.lockBackend();
            String max = Long.toString(FenceToken.MAX_VALUE);
            admin.set(backend.fenceKeyOf("old"), max);
            assertThatThrownBy(() -> BlockingBackend.of(backend).tryAcquire(LockKey.of("old"), LockId.random(), TTL))
                    .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FENCE_EXHAUSTED));
            assertThat(admin.exists(backend.lockKeyOf("old"))).as("no lock").isZero();
            assertThat(admin.get(backend.fenceKeyOf("old"))).as("the counter as it was").isEqualTo(max);
        });
    }

    @Test
    void aCounterThatIsNotANumberFailsTheAcquireAndIsLeftAsItWas() {
        onSharedServer((redis, admin) -> {
            RedisLockBackend backend = redis.lockBackend();
            admin.set(backend.fenceKeyOf("garbled"), "not a number");
            assertThatThrownBy(() -> BlockingBackend.of(backend).tryAcquire(LockKey.of("garbled"), LockId.random(), TTL))
                    .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.getMessage()).contains("does not hold a number"));
            assertThat(admin.exists(backend.lockKeyOf("garbled"))).as("no lock").isZero();
            assertThat(admin.get(backend.fenceKeyOf("garbled"))).isEqualTo("not a number");
        });
    }

    /** The first server millisecond whose every clock-floor tick exceeds {@code fence}. */
    private static long firstMilliAbove(long fence) {
        return ClockFloor.EPOCH_MILLIS + fence / ClockFloor.PER_MILLISECOND + 1;
    }

    @Test
    void aClockFlooredCounterExpiresAMarginAfterItsLeaseAndAReleaseBringsThatToItsFence() {
        Duration margin = Duration.ofMinutes(5);
        onSharedServer(b -> b.withClockMargin(margin), (redis, admin) -> {
            BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
            LockKey key = LockKey.of("orders:6");
            String counter = redis.lockBackend().fenceKeyOf(key.value());
            LockId id = LockId.random();
            Grant grant = locks.tryAcquire(key, id, TTL).orElseThrow();
            assertThat(admin.pexpiretime(counter)).as("the lease's end plus the margin")
                    .isEqualTo(Math.max(grant.expiresAt().toEpochMilli(), firstMilliAbove(grant.fence())) + margin.toMillis());
            Instant extended = locks.extend(key, id, Duration.ofSeconds(60)).orElseThrow();
            assertThat(admin.pexpiretime(counter)).as("moved with the lease").isEqualTo(extended.toEpochMilli() + margin.toMillis());
            assertThat(locks.release(key, id)).isTrue();
            assertThat(admin.pexpiretime(counter)).as("the margin after the fence's tick")
                    .isEqualTo(firstMilliAbove(grant.fence()) + margin.toMillis());
            assertThat(admin.get(counter)).isEqualTo(Long.toString(grant.fence()));

            // A release that finds another holder's lock leaves the counter's expiry alone.
            LockId other = LockId.random();
            Grant second = locks.tryAcquire(key, other, TTL).orElseThrow();
            long expiry = admin.pexpiretime(counter);
            assertThat(locks.release(key, id)).isFalse();
            assertThat(admin.pexpiretime(counter)).isEqualTo(expiry);
            assertThat(second.fence()).isGreaterThan(grant.fence());
        });
    }

    @Test
    void aReleasedCounterIsGoneAfterItsExpiryAndTheNextFenceIsAboveEveryEarlierOne() {
        Duration margin = Duration.ofMillis(300);
        onSharedServer(b -> b.withClockMargin(margin), (redis, admin) -> {
            BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
            LockKey key = LockKey.of("orders:7");
            String counter = redis.lockBackend().fenceKeyOf(key.value());
            long highest = 0;
            for (int round = 0; round < 3; round++) {
                LockId id = LockId.random();
                Grant grant = locks.tryAcquire(key, id, TTL).orElseThrow();
                assertThat(grant.fence()).as("round " + round).isGreaterThan(highest);
                highest = grant.fence();
                assertThat(locks.release(key, id)).isTrue();
                long expiry = admin.pexpiretime(counter);
                if (expiry != -2) { // -2: gone already, as a pair held longer than the margin leaves it
                    assertThat(expiry).isEqualTo(firstMilliAbove(grant.fence()) + margin.toMillis());
                    awaitServerMillis(admin, expiry);
                }
                assertThat(admin.exists(counter)).as("gone after its expiry").isZero();
            }
        });
    }

    @Test
    void aLeaseNeverReleasedLosesItsCounterAMarginAfterItEnds() {
        Duration margin = Duration.ofMillis(300);
        onSharedServer(b -> b.withClockMargin(margin), (redis, admin) -> {
            BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
            LockKey key = LockKey.of("orders:8");
            String counter = redis.lockBackend().fenceKeyOf(key.value());
            Grant grant = locks.tryAcquire(key, LockId.random(), Duration.ofMillis(100)).orElseThrow();
            long expiry = admin.pexpiretime(counter);
            if (expiry != -2) { // -2: gone already, on a machine slow enough to take 400 ms between two calls
                assertThat(expiry).isEqualTo(grant.expiresAt().toEpochMilli() + margin.toMillis());
                awaitServerMillis(admin, expiry);
            }
            assertThat(admin.exists(counter, redis.lockBackend().lockKeyOf(key.value()))).isZero();
            assertThat(locks.tryAcquire(key, LockId.random(), TTL).orElseThrow().fence()).isGreaterThan(grant.fence());
        });
    }

    @Test
    void aDenseCounterNeverExpires() {
        onSharedServer(b -> b.withFenceStrategy(FenceStrategy.DENSE).withClockMargin(Duration.ZERO), (redis, admin) -> {
            BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
            LockKey key = LockKey.of("orders:9");
            String counter = redis.lockBackend().fenceKeyOf(key.value());
            LockId id = LockId.random();
            assertThat(locks.tryAcquire(key, id, TTL).orElseThrow().fence()).isEqualTo(1);
            assertThat(admin.pttl(counter)).isEqualTo(-1);
            locks.extend(key, id, TTL).orElseThrow();
            assertThat(admin.pttl(counter)).isEqualTo(-1);
            assertThat(locks.release(key, id)).isTrue();
            assertThat(admin.pttl(counter)).isEqualTo(-1);
            assertThat(locks.tryAcquire(key, LockId.random(), TTL).orElseThrow().fence()).isEqualTo(2);
        });
    }

    /** Returns once the server's clock has passed {@code millis}: driven by the server's TIME, never a sleep. */
    private static void awaitServerMillis(RedisCommands<String, String> admin, long millis) {
        long now;
        do {
            List<String> t = admin.time();
            now = Long.parseLong(t.get(0)) * 1000 + Long.parseLong(t.get(1)) / 1000;
        } while (now <= millis);
    }

    @Test
    void anAcquireAndAReleaseTakeSevenRedisCommandsWithTheClockFloor() {
        // A private server, so that no other client's commands are counted. EVALSHA counts, and so does
        // every command a script runs.
        onPrivateServer((redis, admin) -> {
            BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
            LockKey key = LockKey.of("orders:4");
            LockId first = LockId.random();
            locks.tryAcquire(key, first, TTL).orElseThrow(); // the first use of a key waits a tick for its floor
            locks.release(key, first);

            Map<String, Long> before = commandCounts(admin);
            int pairs = 200;
            for (int i = 0; i < pairs; i++) {
                LockId id = LockId.random();
                locks.tryAcquire(key, id, TTL).orElseThrow();
                assertThat(locks.release(key, id)).isTrue();
            }
            Map<String, Long> spent = delta(before, commandCounts(admin));
            assertThat(spent).containsEntry("evalsha", 2L * pairs).containsEntry("getdel", (long) pairs)
                    .containsEntry("pexpireat", (long) pairs);
            assertThat(spent.keySet()).containsOnly("evalsha", "set", "getdel", "pexpireat", "time");
            // An acquisition within the 10 us tick of the one before waits for the next tick (one TIME or
            // more) and writes both keys again (two SETs). A pair takes longer than a tick, even on
            // loopback, but the bounds allow for a few such rather than assume none.
            long waited = spent.get("time") - pairs;
            assertThat(waited).isBetween(0L, 5L);
            assertThat(spent.get("set") - 2L * pairs).isBetween(0L, 2 * waited);
            long total = spent.values().stream().mapToLong(Long::longValue).sum();
            assertThat(total).as("seven commands a pair, the two EVALSHAs included, and what waits cost")
                    .isBetween(7L * pairs, 7L * pairs + 3 * waited);
        });
    }

    @Test
    void aHeldKeyCostsTheAcquireNoWrite() {
        onPrivateServer((redis, admin) -> {
            BlockingBackend locks = BlockingBackend.of(redis.lockBackend());
            LockKey key = LockKey.of("orders:5");
            locks.tryAcquire(key, LockId.random(), TTL).orElseThrow();
            String counter = admin.get(redis.lockBackend().fenceKeyOf(key.value()));
            Map<String, Long> before = commandCounts(admin);
            assertThat(locks.tryAcquire(key, LockId.random(), TTL)).isEmpty();
            assertThat(delta(before, commandCounts(admin))).containsOnly(Map.entry("evalsha", 1L), Map.entry("time", 1L),
                    Map.entry("set", 1L)); // the SET NX that found the lock
            assertThat(admin.get(redis.lockBackend().fenceKeyOf(key.value()))).isEqualTo(counter);
        });
    }

    /** What a test does with a backend of its own and a plain connection to the same server. */
    private interface Scenario {
        void run(FenceGuardRedis redis, RedisCommands<String, String> admin);
    }

    /** On the shared server, under a key prefix of its own that is deleted afterwards. */
    private static void onSharedServer(Scenario scenario) {
        onSharedServer(b -> b, scenario);
    }

    /** On the shared server, with {@code settings} applied, under a key prefix of its own that is deleted afterwards. */
    private static void onSharedServer(UnaryOperator<FenceGuardRedis.Builder> settings, Scenario scenario) {
        String prefix = TestRedis.keyPrefix("layout");
        try (FenceGuardRedis redis = settings.apply(FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(prefix)).build();
                StatefulRedisConnection<String, String> admin = RedisSupport.shared().connect()) {
            scenario.run(redis, admin.sync());
        } finally {
            RedisSupport.deleteKeys(prefix);
        }
    }

    /** On a private server, so that no other client's commands are counted. */
    private static void onPrivateServer(Scenario scenario) {
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build();
                    StatefulRedisConnection<String, String> admin = client.connect()) {
                scenario.run(redis, admin.sync());
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
