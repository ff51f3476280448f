package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.redis.internal.RedisKeys;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * Generated resource keys, built from internal key names, braces, prefixes and separators, never change
 * another lock's keys or another resource's data or fence: each is refused (exactly when it is in a
 * lock backend's, the flight store's or the fence keys' namespace) or isolated. Real Redis, every fenced operation.
 */
class RedisKeySpaceProperties {

    private static final String R = TestRedis.keyPrefix("keyprops");
    /** Lock backends and fence keys laid out like the defaults ({@code fg:}, {@code fg:fence:}), plus a second backend. */
    private static final String LOCKS = R;
    private static final String OTHER_LOCKS = R + "other:";
    private static final String FENCES = R + "fence:";
    private static final String FLIGHTS = R + "sf:";
    private static final List<String> LOCK_NAMES = List.of("orders", "fence", "lock", "{x}", "a}:lock", "%7B", "0");
    private static final List<String> RESOURCES = List.of(R + "res:s", R + "res:h", R + "res:gone", R + "res:{0}:t");

    private static final StatefulRedisConnection<String, String> CONN = RedisSupport.shared().connect();
    private static final RedisCommands<String, String> REDIS = CONN.sync();
    /** The fenced writes come from this one: its own backend is refused unnamed, the other one named. */
    private static final FenceGuardRedis MAIN = FenceGuardRedis.builder(CONN).withKeyPrefix(LOCKS).withFenceStrategy(FenceStrategy.DENSE)
            .withOtherLockKeyPrefixes(OTHER_LOCKS).withFenceKeyPrefix(FENCES).withFlightKeyPrefix(FLIGHTS)
            .withMetrics(LockMetrics.none()).build();
    private static final FenceGuardRedis OTHER = FenceGuardRedis.builder(CONN).withKeyPrefix(OTHER_LOCKS).withFenceKeyPrefix(FENCES)
            .withMetrics(LockMetrics.none()).build();
    private static final RedisLockBackend DENSE = MAIN.lockBackend();
    private static final RedisLockBackend FLOORED = OTHER.lockBackend();
    private static final FencedRedis FENCED = MAIN.fencedWrites();
    private static final List<String> PROTECTED = seed();

    /** Locks with issued fences (one of each held), resources of each kind; returns every key they use. */
    private static List<String> seed() {
        List<String> keys = new ArrayList<>();
        for (RedisLockBackend backend : List.of(DENSE, FLOORED)) {
            for (String name : LOCK_NAMES) {
                for (int i = 0; i < 3; i++) {
                    LockId id = LockId.random();
                    BlockingBackend.of(backend).tryAcquire(LockKey.of(name), id, Duration.ofMinutes(30)).orElseThrow(); // outlives the run: the snapshots must not see it expire
                    if (i < 2 || !name.equals("orders")) {
                        BlockingBackend.of(backend).release(LockKey.of(name), id);
                    }
                }
                keys.add(backend.lockKeyOf(name));
                keys.add(backend.fenceKeyOf(name));
            }
        }
        for (String name : LOCK_NAMES) {
            LockKey flight = LockKey.of(name);
            MAIN.flightStore().begin(flight, 7, Duration.ofSeconds(10)).toCompletableFuture().join();
            MAIN.flightStore().publish(flight, 7, new byte[] {7}, Duration.ofMinutes(30), Duration.ofSeconds(10)).toCompletableFuture().join();
            String tag = FLIGHTS + "{" + RedisKeys.escape(name) + "}";
            keys.add(tag + ":flight");
            keys.add(tag + ":result");
        }
        FenceToken seven = FenceToken.of(7);
        FENCED.set(RESOURCES.get(0), seven, "data").orThrow();
        FENCED.hset(RESOURCES.get(1), seven, Map.of("status", "paid")).orThrow();
        FENCED.delete(RESOURCES.get(2), seven).orThrow();
        FENCED.set(RESOURCES.get(3), seven, "data").orThrow();
        FENCED.claim(RESOURCES.get(3), FenceToken.of(8)).orThrow();
        for (String r : RESOURCES) {
            keys.add(r);
            keys.add(FENCED.fenceKeyOf(r));
        }
        return List.copyOf(keys);
    }

    @AfterContainer
    static void cleanUp() {
        MAIN.close();
        OTHER.close();
        CONN.close();
        RedisSupport.deleteKeys(R);
    }

    enum Op { SET, HSET, DELETE, CLAIM, EVAL_FIRST, EVAL_SECOND }

    @Provide
    Arbitrary<String> keys() {
        List<String> internalPieces = new ArrayList<>();
        for (String k : PROTECTED) {
            internalPieces.add(k.substring(R.length())); // e.g. "{orders}:fence", "fence:{1x}:fgtest:...:res:s"
        }
        Arbitrary<String> fragment = Arbitraries.oneOf(
                Arbitraries.of("{", "}", "{}", ":", "%", "%7B", "%7D", "%25", "lock", "fence", ":lock", ":fence", "}:lock",
                        "}:fence", "fence:", "other:", "sf:", ":flight", ":result", "res:s", "orders", "0", "x", " ", "é",
                        "\uD83D\uDD12", "\\", "*"),
                Arbitraries.of(R, LOCKS, OTHER_LOCKS, FENCES, FLIGHTS),
                Arbitraries.of(internalPieces));
        Arbitrary<String> built = fragment.list().ofMinSize(0).ofMaxSize(6).map(l -> R + String.join("", l));
        Arbitrary<String> exact = Arbitraries.of(PROTECTED);
        Arbitrary<String> nearMiss = Arbitraries.oneOf(
                exact.flatMap(k -> fragment.map(frag -> k + frag)),
                exact.filter(k -> k.length() > R.length() + 1).map(k -> k.substring(0, k.length() - 1)),
                exact.flatMap(k -> fragment.map(frag -> R + frag + k.substring(R.length()))));
        return Arbitraries.frequencyOf(
                Tuple.of(2, exact), Tuple.of(3, nearMiss), Tuple.of(5, built))
                .filter(k -> !k.isEmpty() && !k.equals(R));
    }

    @Property(tries = 1000)
    void aResourceKeyIsRefusedOrIsolated(@ForAll("keys") String key, @ForAll Op op, @ForAll("fences") long fence) {
        boolean internal = key.startsWith(LOCKS + "{") || key.startsWith(OTHER_LOCKS + "{") || key.startsWith(FENCES + "{")
                || key.startsWith(FLIGHTS + "{");
        List<String> guarded = PROTECTED.stream().filter(k -> internal || !isOwnKey(k, key)).toList();
        Map<String, String> before = snapshot(guarded);
        Object outcome;
        try {
            outcome = run(op, key, FenceToken.of(fence));
        } catch (IllegalArgumentException e) {
            outcome = e;
        } catch (FenceGuardException e) { // e.g. WRONGTYPE: the resource's own business, nothing written
            outcome = e.code();
        }
        try {
            // First what matters: no other lock or resource changed. Then the rule that guarantees it.
            assertThat(changes(before, snapshot(guarded))).as("%s on %s with fence %d changed", op, key, fence).isEmpty();
            if (internal) {
                assertThat(outcome).as("%s on %s", op, key).isInstanceOfSatisfying(IllegalArgumentException.class,
                        e -> assertThat(e).hasMessageContaining("fence-guard's own key space"));
            } else {
                assertThat(outcome).as("%s on %s", op, key).isNotInstanceOf(IllegalArgumentException.class);
            }
        } finally {
            if (!internal && !PROTECTED.contains(key)) {
                REDIS.del(key, FENCED.fenceKeyOf(key));
            }
        }
    }

    @Provide
    Arbitrary<Long> fences() {
        return Arbitraries.of(1L, 5L, 7L, 8L, 1_000_000_000_000L);
    }

    /** A seeded resource's own data and fence key may change when the generated key is that resource. */
    private static boolean isOwnKey(String protectedKey, String key) {
        return protectedKey.equals(key) || protectedKey.equals(FENCED.fenceKeyOf(key));
    }

    private static Object run(Op op, String key, FenceToken fence) {
        return switch (op) {
            case SET -> FENCED.set(key, fence, "1");
            case HSET -> FENCED.hset(key, fence, Map.of("status", "1"));
            case DELETE -> FENCED.delete(key, fence);
            case CLAIM -> FENCED.claim(key, fence);
            case EVAL_FIRST -> FENCED.eval("redis.call('SET', KEYS[1], ARGV[1])", List.of(key), fence, List.of("1")).outcome();
            case EVAL_SECOND -> FENCED.eval("redis.call('DEL', KEYS[2])", List.of(R + "eval-guard", key), fence, List.of()).outcome();
        };
    }

    private static List<String> changes(Map<String, String> before, Map<String, String> after) {
        return before.keySet().stream().filter(k -> !before.get(k).equals(after.get(k)))
                .map(k -> k + ": " + before.get(k) + " -> " + after.get(k)).toList();
    }

    /** Type and value of each key, in one round trip, so any change to any of them shows. */
    private static Map<String, String> snapshot(List<String> keys) {
        List<String> values = REDIS.eval(SNAPSHOT, ScriptOutputType.MULTI, keys.toArray(String[]::new));
        Map<String, String> out = new TreeMap<>();
        for (int i = 0; i < keys.size(); i++) {
            out.put(keys.get(i), values.get(i));
        }
        return out;
    }

    private static final String SNAPSHOT = """
            local out = {}
            for i, k in ipairs(KEYS) do
              local t = redis.call('TYPE', k)['ok']
              if t == 'string' then out[i] = 'string:' .. redis.call('GET', k)
              elseif t == 'hash' then out[i] = 'hash:' .. table.concat(redis.call('HGETALL', k), ',')
              else out[i] = t end
            end
            return out""";
}
