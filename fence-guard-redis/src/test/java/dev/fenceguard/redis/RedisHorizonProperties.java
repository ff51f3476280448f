package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.WriteOutcome.Applied;
import dev.fenceguard.core.WriteOutcome.NotFound;
import dev.fenceguard.core.WriteOutcome.Stale;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Any sequence of fenced writes under a horizon, on a string key and a hash key, against a model of
 * docs/fence-lifecycle.md: a write that finds no fence record is refused {@code BELOW_HORIZON} if its
 * fence is at or below the horizon; any other write follows the write rule; and after every write, a
 * tombstone (fence key or hash) expires exactly at the first millisecond above its fence plus horizon and
 * margin, while a live key has no expiry of fence-guard's. Fences are a minute or more either side of
 * the horizon the server's clock gives, so the model knows which side each is on.
 */
class RedisHorizonProperties {

    private static final String P = TestRedis.keyPrefix("horizonprops");
    private static final Duration H = Duration.ofHours(1);
    private static final Duration M = Duration.ofMinutes(5);
    private static final long MINUTE = 60_000 * ClockFloor.PER_MILLISECOND;
    private static final AtomicInteger TRIES = new AtomicInteger();

    private static FenceGuardRedis redis;
    private static FencedRedis writes;
    private static StatefulRedisConnection<String, String> adminConnection;
    private static RedisCommands<String, String> admin;

    @BeforeContainer
    static void open() {
        redis = RedisSupport.under(P).withHorizon(H).withClockMargin(M).build();
        writes = redis.fencedWrites();
        adminConnection = RedisSupport.shared().connect();
        admin = adminConnection.sync();
    }

    @AfterContainer
    static void close() {
        RedisSupport.deleteKeys(P);
        adminConnection.close();
        redis.close();
    }

    enum Kind { SET, HSET, DELETE, CLAIM, EVAL_SET, EVAL_DELETE }

    /** A write: what, on the hash key or the string key, with a fence {@code offset} ticks from a minute past the horizon (below it if {@code old}). */
    record Op(Kind kind, boolean onHash, boolean old, int offset) {}

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Op> op = Combinators.combine(Arbitraries.of(Kind.values()), Arbitraries.of(true, false),
                Arbitraries.of(true, false, false, false), Arbitraries.integers().between(0, 6)).as(Op::new)
                // The hash key takes hset, delete and claim; the string key everything but hset.
                .filter(o -> o.onHash() ? o.kind() == Kind.HSET || o.kind() == Kind.DELETE || o.kind() == Kind.CLAIM : o.kind() != Kind.HSET);
        return op.list().ofMinSize(1).ofMaxSize(12);
    }

    /** The model of one key: its fence record (null: none), whether it has data, and where a tombstone lives. */
    static final class Model {
        Long stored;
        boolean live;
        boolean inHash;
    }

    @Property(tries = 150)
    void everyWriteFollowsRuleOneOrTheWriteRuleAndEveryTombstoneExpiresOnTime(@ForAll("ops") List<Op> ops) {
        int n = TRIES.incrementAndGet();
        String stringKey = P + n + ":s";
        String hashKey = P + n + ":h";
        Map<Boolean, Model> models = new HashMap<>(Map.of(false, new Model(), true, new Model()));
        long horizon = horizonNow();
        for (Op op : ops) {
            String key = op.onHash() ? hashKey : stringKey;
            Model m = models.get(op.onHash());
            long fence = op.old() ? horizon - MINUTE - op.offset() : horizon + MINUTE + op.offset();
            WriteOutcome outcome = write(op, key, FenceToken.of(fence));
            String what = op + " fence " + fence + " on " + (m.stored == null ? "no record" : m.stored + (m.live ? " live" : " tombstone"));
            if (m.stored == null && op.old()) {
                assertThat(outcome).as(what).isInstanceOfSatisfying(Stale.class,
                        s -> assertThat(s.reason()).isEqualTo(Stale.Reason.BELOW_HORIZON));
            } else if (m.stored != null && fence < m.stored) {
                assertThat(outcome).as(what).isInstanceOfSatisfying(Stale.class, s -> {
                    assertThat(s.reason()).isEqualTo(Stale.Reason.NEWER_FENCE);
                    assertThat(s.currentFence()).isEqualTo(m.stored);
                });
            } else {
                boolean wasLive = m.live;
                apply(op, m, fence);
                if (op.kind() == Kind.CLAIM && !wasLive) {
                    assertThat(outcome).as(what).isInstanceOf(NotFound.class);
                } else {
                    assertThat(outcome).as(what).isInstanceOf(Applied.class);
                }
            }
            check(key, m, what);
        }
    }

    private static WriteOutcome write(Op op, String key, FenceToken fence) {
        return switch (op.kind()) {
            case SET -> writes.set(key, fence, "v");
            case HSET -> writes.hset(key, fence, Map.of("a", "1"));
            case DELETE -> writes.delete(key, fence);
            case CLAIM -> writes.claim(key, fence);
            case EVAL_SET -> writes.eval("redis.call('SET', KEYS[1], 'e')", List.of(key), fence, List.of()).outcome();
            case EVAL_DELETE -> writes.eval("redis.call('DEL', KEYS[1])", List.of(key), fence, List.of()).outcome();
        };
    }

    /** An admitted write, as docs/redis.md says each one leaves the key. */
    private static void apply(Op op, Model m, long fence) {
        m.stored = fence;
        switch (op.kind()) {
            case SET, EVAL_SET -> m.live = true;
            case HSET -> {
                m.live = true;
                m.inHash = true;
            }
            case DELETE, EVAL_DELETE -> m.live = false; // a hash keeps its fence field; anything else its fence key
            case CLAIM -> { } // recorded where the fence already lives: the hash if there is one, else the fence key
        }
    }

    private static void check(String key, Model m, String what) {
        String fenceKey = writes.fenceKeyOf(key);
        if (m.stored == null) {
            assertThat(admin.exists(key, fenceKey)).as(what + ": nothing written").isZero();
            return;
        }
        String holder = m.inHash ? key : fenceKey;
        if (m.inHash) {
            assertThat(admin.hget(key, "_fence")).as(what).isEqualTo(Long.toString(m.stored));
            assertThat(admin.exists(fenceKey)).as(what + ": no fence key beside the hash").isZero();
        } else {
            assertThat(admin.get(fenceKey)).as(what).isEqualTo(Long.toString(m.stored));
        }
        if (m.live) {
            assertThat(admin.pexpiretime(holder)).as(what + ": live, no expiry").isEqualTo(-1);
            assertThat(admin.pexpiretime(key)).as(what + ": live data, no expiry").isEqualTo(-1);
        } else {
            assertThat(admin.exists(m.inHash ? fenceKey : key)).as(what + ": no data").isZero();
            if (m.inHash) {
                assertThat(admin.hlen(key)).as(what + ": the fence field alone").isEqualTo(1);
            }
            assertThat(admin.pexpiretime(holder)).as(what + ": the tombstone's expiry")
                    .isEqualTo(ClockFloor.EPOCH_MILLIS + m.stored / ClockFloor.PER_MILLISECOND + 1 + H.toMillis() + M.toMillis());
        }
    }

    /** {@code tick(TIME - H)} as the server reads it now. */
    private static long horizonNow() {
        List<String> t = admin.time();
        return ClockFloor.floorAtMicros(Long.parseLong(t.get(0)) * 1_000_000 + Long.parseLong(t.get(1)))
                - H.toMillis() * ClockFloor.PER_MILLISECOND;
    }
}
