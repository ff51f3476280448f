package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.WriteOutcome.Applied;
import dev.fenceguard.core.WriteOutcome.NotFound;
import dev.fenceguard.core.WriteOutcome.Stale;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.testkit.servers.Ports;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Rule 1 and the tombstones' expiry of docs/fence-lifecycle.md on Redis: the fenced writes of a
 * {@link FenceGuardRedis} built with a horizon, on the shared server, with fences chosen relative to the
 * server's own {@code TIME}.
 */
class RedisHorizonTest {

    private static final String P = TestRedis.keyPrefix("horizon");
    private static final Duration H = Duration.ofHours(1);
    private static final Duration M = Duration.ofMinutes(5);
    /** Ticks per minute of the clock floor. */
    private static final long MINUTE = 60_000 * ClockFloor.PER_MILLISECOND;

    private static FenceGuardRedis redis;
    private static FenceGuardRedis withoutHorizon;
    private static FencedRedis writes;
    private static FencedRedis plain;
    private static StatefulRedisConnection<String, String> adminConnection;
    private static RedisCommands<String, String> admin;

    @BeforeAll
    static void open() {
        redis = RedisSupport.under(P).withHorizon(H).withClockMargin(M).build();
        writes = redis.fencedWrites();
        withoutHorizon = RedisSupport.under(P).build();
        plain = withoutHorizon.fencedWrites();
        adminConnection = RedisSupport.shared().connect();
        admin = adminConnection.sync();
    }

    @AfterAll
    static void close() {
        RedisSupport.deleteKeys(P);
        adminConnection.close();
        redis.close();
        withoutHorizon.close();
    }

    /** The server's clock floor now. */
    private static long tickNow() {
        List<String> t = admin.time();
        return ClockFloor.floorAtMicros(Long.parseLong(t.get(0)) * 1_000_000 + Long.parseLong(t.get(1)));
    }

    /** {@code tick(TIME - H)} as the server reads it now. */
    private static long horizonNow() {
        return tickNow() - H.toMillis() * ClockFloor.PER_MILLISECOND;
    }

    /** When a tombstone holding {@code fence} expires: the first millisecond above its tick, plus H and M. */
    private static long expiryOf(long fence) {
        return ClockFloor.EPOCH_MILLIS + fence / ClockFloor.PER_MILLISECOND + 1 + H.toMillis() + M.toMillis();
    }

    private static String key(String name) {
        return P + name;
    }

    private static void assertBelowHorizon(WriteOutcome outcome, long fence, long horizonBefore) {
        assertThat(outcome).isInstanceOfSatisfying(Stale.class, s -> {
            assertThat(s.reason()).isEqualTo(Stale.Reason.BELOW_HORIZON);
            assertThat(s.presentedFence()).isEqualTo(fence);
            assertThat(s.currentFence()).as("the horizon, read after the one the test read").isGreaterThanOrEqualTo(horizonBefore)
                    .isLessThan(horizonBefore + MINUTE);
        });
        assertThatThrownBy(outcome::orThrow).isInstanceOf(StaleFenceException.class).hasMessageContaining("BELOW_HORIZON");
    }

    /** Every way to create a fence record, each on an absent key of its own. */
    private static Map<String, Function<FenceToken, WriteOutcome>> creators(String name) {
        return Map.of(
                "set", f -> writes.set(key(name + ":set"), f, "v"),
                "hset", f -> writes.hset(key(name + ":hset"), f, Map.of("a", "1")),
                "delete", f -> writes.delete(key(name + ":delete"), f),
                "claim", f -> writes.claim(key(name + ":claim"), f),
                "eval", f -> writes.eval("redis.call('SET', KEYS[1], 'x')", List.of(key(name + ":eval")), f, List.of()).outcome());
    }

    @Test
    void aFenceAtOrBelowTheHorizonCreatesNoRecordAndLeavesNothing() {
        long horizon = horizonNow();
        long old = horizon - MINUTE;
        creators("old").forEach((operation, write) -> {
            assertBelowHorizon(write.apply(FenceToken.of(old)), old, horizon);
            String k = key("old:" + operation);
            assertThat(admin.exists(k, writes.fenceKeyOf(k))).as(operation + " wrote nothing").isZero();
        });
    }

    @Test
    void aFenceAboveTheHorizonCreatesTheRecord() {
        long fresh = horizonNow() + MINUTE;
        creators("fresh").forEach((operation, write) -> assertThat(write.apply(FenceToken.of(fresh)))
                .as(operation).isInstanceOfAny(Applied.class, NotFound.class));
    }

    @Test
    void aWriteThatFindsARecordFollowsTheWriteRuleAloneHoweverOldItsFence() {
        long old = horizonNow() - MINUTE;
        String k = key("recorded");
        assertThat(plain.set(k, FenceToken.of(old), "1")).as("a writer without a horizon").isInstanceOf(Applied.class);
        assertThat(writes.set(k, FenceToken.of(old), "2")).isInstanceOf(Applied.class);
        assertThat(writes.delete(k, FenceToken.of(old))).isInstanceOf(Applied.class);
        assertThat(writes.set(k, FenceToken.of(old - 1), "3")).isInstanceOfSatisfying(Stale.class,
                s -> assertThat(s.reason()).isEqualTo(Stale.Reason.NEWER_FENCE));
        assertThat(writes.claim(k, FenceToken.of(old))).isInstanceOf(NotFound.class);
        String h = key("recorded-hash");
        assertThat(plain.hset(h, FenceToken.of(old), Map.of("a", "1"))).isInstanceOf(Applied.class);
        assertThat(writes.hset(h, FenceToken.of(old), Map.of("a", "2"))).isInstanceOf(Applied.class);
    }

    @Test
    void aTombstoneExpiresAtTheFirstMillisecondAboveItsFencePlusHorizonAndMargin() {
        long fence = horizonNow() + MINUTE + 12_345;
        FenceToken f = FenceToken.of(fence);
        String deleted = key("tomb:deleted");
        writes.set(deleted, f, "v");
        assertThat(admin.pexpiretime(writes.fenceKeyOf(deleted))).as("live: no expiry").isEqualTo(-1);
        assertThat(writes.delete(deleted, f)).isInstanceOf(Applied.class);
        assertThat(admin.pexpiretime(writes.fenceKeyOf(deleted))).isEqualTo(expiryOf(fence));

        String absent = key("tomb:absent");
        assertThat(writes.delete(absent, f)).isInstanceOf(Applied.class);
        assertThat(admin.pexpiretime(writes.fenceKeyOf(absent))).isEqualTo(expiryOf(fence));

        String claimed = key("tomb:claimed");
        assertThat(writes.claim(claimed, f)).isInstanceOf(NotFound.class);
        assertThat(admin.pexpiretime(writes.fenceKeyOf(claimed))).isEqualTo(expiryOf(fence));
        assertThat(writes.claim(claimed, FenceToken.of(fence + 100))).as("a claim raises the tombstone and its expiry")
                .isInstanceOf(NotFound.class);
        assertThat(admin.pexpiretime(writes.fenceKeyOf(claimed))).isEqualTo(expiryOf(fence + 100));

        String hash = key("tomb:hash");
        writes.hset(hash, f, Map.of("a", "1"));
        assertThat(admin.pexpiretime(hash)).isEqualTo(-1);
        assertThat(writes.delete(hash, f)).isInstanceOf(Applied.class);
        assertThat(admin.hgetall(hash)).isEqualTo(Map.of("_fence", Long.toString(fence)));
        assertThat(admin.pexpiretime(hash)).as("the hash tombstone").isEqualTo(expiryOf(fence));
        assertThat(writes.claim(hash, FenceToken.of(fence + 200))).isInstanceOf(NotFound.class);
        assertThat(admin.pexpiretime(hash)).isEqualTo(expiryOf(fence + 200));

        String eval = key("tomb:eval");
        assertThat(writes.eval("return 1", List.of(eval), f, List.of()).outcome()).as("a script that leaves the key absent")
                .isInstanceOf(Applied.class);
        assertThat(admin.pexpiretime(writes.fenceKeyOf(eval))).isEqualTo(expiryOf(fence));
    }

    @Test
    void aWriteThatMakesTheKeyLiveAgainClearsTheExpiry() {
        long fence = horizonNow() + MINUTE;
        FenceToken f = FenceToken.of(fence);
        String s = key("live:set");
        writes.delete(s, f);
        assertThat(writes.set(s, f, "back")).isInstanceOf(Applied.class);
        assertThat(admin.pexpiretime(writes.fenceKeyOf(s))).isEqualTo(-1);
        assertThat(admin.pexpiretime(s)).isEqualTo(-1);

        String h = key("live:hash");
        writes.hset(h, f, Map.of("a", "1"));
        writes.delete(h, f);
        assertThat(writes.hset(h, f, Map.of("a", "2"))).isInstanceOf(Applied.class);
        assertThat(admin.pexpiretime(h)).as("PERSIST after HSET on the tombstone hash").isEqualTo(-1);

        String fromString = key("live:from-string");
        writes.delete(fromString, f);
        assertThat(writes.hset(fromString, f, Map.of("a", "1"))).isInstanceOf(Applied.class);
        assertThat(admin.pexpiretime(fromString)).isEqualTo(-1);
        assertThat(admin.exists(writes.fenceKeyOf(fromString))).isZero();

        String e = key("live:eval");
        writes.delete(e, f);
        assertThat(writes.eval("redis.call('SET', KEYS[1], 'x')", List.of(e), f, List.of()).outcome()).isInstanceOf(Applied.class);
        assertThat(admin.pexpiretime(writes.fenceKeyOf(e))).isEqualTo(-1);
    }

    @Test
    void aLiveHashKeepsAnExpiryItsOwnerGaveIt() {
        long fence = horizonNow() + MINUTE;
        String h = key("owned-expiry");
        writes.hset(h, FenceToken.of(fence), Map.of("a", "1"));
        admin.pexpire(h, 600_000);
        long expiry = admin.pexpiretime(h);
        assertThat(writes.hset(h, FenceToken.of(fence), Map.of("a", "2"))).isInstanceOf(Applied.class);
        assertThat(writes.claim(h, FenceToken.of(fence))).isInstanceOf(Applied.class);
        assertThat(admin.pexpiretime(h)).isEqualTo(expiry);
    }

    @Test
    void aStaleWriteLeavesTheTombstoneAndItsExpiryAsTheyWere() {
        long fence = horizonNow() + MINUTE;
        String k = key("stale");
        writes.delete(k, FenceToken.of(fence));
        long expiry = admin.pexpiretime(writes.fenceKeyOf(k));
        assertThat(writes.set(k, FenceToken.of(fence - 1), "zombie")).isInstanceOfSatisfying(Stale.class,
                s -> assertThat(s.reason()).isEqualTo(Stale.Reason.NEWER_FENCE));
        assertThat(writes.hset(k, FenceToken.of(fence - 1), Map.of("a", "1"))).isInstanceOf(Stale.class);
        assertThat(writes.claim(k, FenceToken.of(fence - 1))).isInstanceOf(Stale.class);
        assertThat(writes.delete(k, FenceToken.of(fence - 1))).isInstanceOf(Stale.class);
        assertThat(writes.eval("redis.call('SET', KEYS[1], 'x')", List.of(k), FenceToken.of(fence - 1), List.of()).outcome())
                .isInstanceOf(Stale.class);
        assertThat(admin.exists(k)).isZero();
        assertThat(admin.get(writes.fenceKeyOf(k))).isEqualTo(Long.toString(fence));
        assertThat(admin.pexpiretime(writes.fenceKeyOf(k))).isEqualTo(expiry);
    }

    @Test
    void theWarmUpOfAWriterWithAHorizonRunsItsScriptsAndWritesNothing() {
        writes.warmUp();
        assertThat(admin.exists("warm-up", writes.fenceKeyOf("warm-up"))).isZero();
    }

    @Test
    void theAsyncFaceGivesTheSameRefusal() throws Exception {
        long horizon = horizonNow();
        long old = horizon - MINUTE;
        WriteOutcome outcome = writes.async().set(key("async"), FenceToken.of(old), "v").toCompletableFuture().get();
        assertBelowHorizon(outcome, old, horizon);
    }

    @Test
    void anExpiredTombstoneStillRefusesItsFenceAndEveryFenceBelow() throws Exception {
        // H = 1 s, M = 0: a tombstone whose fence is 500 ms above the horizon expires about 500 ms later
        // (time enough for the delete to pass rule 1 on a loaded machine).
        try (FenceGuardRedis shortLived = RedisSupport.under(P).withHorizon(Duration.ofSeconds(1)).withClockMargin(Duration.ZERO)
                .build()) {
            FencedRedis w = shortLived.fencedWrites();
            String k = key("expired");
            long fence = tickNow() - 1_000 * ClockFloor.PER_MILLISECOND + 500 * ClockFloor.PER_MILLISECOND;
            assertThat(w.delete(k, FenceToken.of(fence))).isInstanceOf(Applied.class);
            long expiry = admin.pexpiretime(w.fenceKeyOf(k));
            assertThat(expiry).isEqualTo(ClockFloor.EPOCH_MILLIS + fence / ClockFloor.PER_MILLISECOND + 1 + 1_000);
            awaitServerMillis(expiry);
            assertThat(admin.exists(w.fenceKeyOf(k))).as("expired").isZero();

            // A zombie with the purged fence, and one below, from several threads at once.
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                CountDownLatch go = new CountDownLatch(1);
                List<Future<WriteOutcome>> outcomes = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    long zombie = fence - i;
                    int n = i;
                    outcomes.add(pool.submit(() -> {
                        go.await();
                        return n % 2 == 0 ? w.set(k, FenceToken.of(zombie), "zombie") : w.hset(k, FenceToken.of(zombie), Map.of("z", "1"));
                    }));
                }
                go.countDown();
                for (Future<WriteOutcome> o : outcomes) {
                    assertThat(o.get()).isInstanceOfSatisfying(Stale.class,
                            s -> assertThat(s.reason()).isEqualTo(Stale.Reason.BELOW_HORIZON));
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(admin.exists(k, w.fenceKeyOf(k))).isZero();
        }
    }

    /** Returns once the server's clock has passed {@code millis}: driven by the server's TIME, never a sleep. */
    private static void awaitServerMillis(long millis) {
        long now;
        do {
            List<String> t = admin.time();
            now = Long.parseLong(t.get(0)) * 1000 + Long.parseLong(t.get(1)) / 1000;
        } while (now <= millis);
    }

    @Test
    void badSettingsAreRefusedBeforeConnecting() {
        // A client of a port where nothing listens: a refusal that came after connecting would be UNAVAILABLE.
        RedisClient nowhere = RedisClient.create(RedisURI.create("redis://127.0.0.1:" + Ports.refused()));
        try {
            FenceGuardRedis.Builder b = FenceGuardRedis.builder(nowhere);
            assertThatThrownBy(() -> b.withHorizon(null)).isInstanceOf(NullPointerException.class).hasMessage("horizon");
            assertThatThrownBy(() -> b.withHorizon(Duration.ofMillis(999))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("horizon must be between 1 s and 3650 days, was PT0.999S");
            assertThatThrownBy(() -> b.withHorizon(Duration.ofDays(3651))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> b.withClockMargin(null)).isInstanceOf(NullPointerException.class).hasMessage("clockMargin");
            assertThatThrownBy(() -> b.withClockMargin(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("clockMargin must be between 0 and 1 day, was PT-0.001S");
            assertThatThrownBy(() -> b.withClockMargin(Duration.ofDays(2))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> FenceGuardRedis.builder(nowhere).withFenceStrategy(FenceStrategy.DENSE).withHorizon(H).build())
                    .as("DENSE fences are all below any horizon").isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("withHorizon needs FenceStrategy.CLOCK_FLOORED");
        } finally {
            nowhere.shutdown();
        }
    }
}
