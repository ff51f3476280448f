package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.WriteOutcome.Applied;
import dev.fenceguard.core.WriteOutcome.NotFound;
import dev.fenceguard.core.WriteOutcome.Stale;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every fenced write through both faces, on real Redis: the blocking one, and the asynchronous one
 * waited for by the test. The same tests give the same outcomes and leave the same data; each face
 * writes keys of its own.
 */
class FencedRedisTest {

    private static final String P = TestRedis.keyPrefix("fenced");

    @AfterAll
    static void cleanUp() {
        RedisSupport.deleteKeys(P);
    }

    private static FenceToken f(long v) {
        return FenceToken.of(v);
    }

    /** The fenced writes through one face; an exception comes out as the face gives it. */
    interface Writes {
        WriteOutcome set(String key, FenceToken fence, String value);

        WriteOutcome hset(String key, FenceToken fence, Map<String, String> fields);

        WriteOutcome delete(String key, FenceToken fence);

        WriteOutcome claim(String key, FenceToken fence);

        FencedRedis.ScriptResult eval(String luaBody, List<String> keys, FenceToken fence, List<String> args);
    }

    /** The blocking face as it is. */
    static Writes blocking(FencedRedis w) {
        return new Writes() {
            public WriteOutcome set(String key, FenceToken fence, String value) {
                return w.set(key, fence, value);
            }

            public WriteOutcome hset(String key, FenceToken fence, Map<String, String> fields) {
                return w.hset(key, fence, fields);
            }

            public WriteOutcome delete(String key, FenceToken fence) {
                return w.delete(key, fence);
            }

            public WriteOutcome claim(String key, FenceToken fence) {
                return w.claim(key, fence);
            }

            public FencedRedis.ScriptResult eval(String luaBody, List<String> keys, FenceToken fence, List<String> args) {
                return w.eval(luaBody, keys, fence, args);
            }
        };
    }

    /** The asynchronous face: a bad argument throws at the call; a failed stage is rethrown with its own exception. */
    static Writes async(FencedRedis blocking) {
        AsyncFencedRedis w = blocking.async();
        return new Writes() {
            public WriteOutcome set(String key, FenceToken fence, String value) {
                return join(w.set(key, fence, value));
            }

            public WriteOutcome hset(String key, FenceToken fence, Map<String, String> fields) {
                return join(w.hset(key, fence, fields));
            }

            public WriteOutcome delete(String key, FenceToken fence) {
                return join(w.delete(key, fence));
            }

            public WriteOutcome claim(String key, FenceToken fence) {
                return join(w.claim(key, fence));
            }

            public FencedRedis.ScriptResult eval(String luaBody, List<String> keys, FenceToken fence, List<String> args) {
                return join(w.eval(luaBody, keys, fence, args));
            }
        };
    }

    static <T> T join(CompletionStage<T> stage) {
        try {
            return stage.toCompletableFuture().get(30, TimeUnit.SECONDS); // a guard only; writes answer in milliseconds
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new AssertionError("the stage failed with a checked exception", e.getCause());
        } catch (InterruptedException | TimeoutException e) {
            throw new AssertionError("no answer from the stage", e);
        }
    }

    /** The tests, run once per face. */
    abstract static class OnEveryFace {
        StatefulRedisConnection<String, String> conn;
        RedisCommands<String, String> redis;
        FenceGuardRedis guard;
        Writes fenced;

        /** The face under test over {@code writes}. */
        abstract Writes face(FencedRedis writes);

        /** A short name of the face: every key a test writes starts with it. */
        abstract String name();

        String k(String key) {
            return P + name() + ":" + key;
        }

        static FenceGuardRedis.Builder builder(StatefulRedisConnection<String, String> c) {
            return FenceGuardRedis.builder(c).withFenceKeyPrefix(P + "fence:").withMetrics(LockMetrics.none());
        }

        @BeforeEach
        void open() {
            conn = RedisSupport.shared().connect();
            redis = conn.sync();
            guard = builder(conn).build();
            fenced = face(guard.fencedWrites());
        }

        @AfterEach
        void close() {
            guard.close();
            conn.close();
        }

        String fenceKeyOf(String key) {
            return guard.fencedWrites().fenceKeyOf(key);
        }

        Writes withPolicy(FencePolicy policy) {
            return face(guard.fencedWrites(policy));
        }

        @Test
        void setAppliesNewerOrEqualFencesAndRejectsOlderOnes() {
            String key = k("stock:sku-1");
            assertThat(fenced.set(key, f(3), "10")).isEqualTo(new Applied(key, 3));
            assertThat(fenced.set(key, f(3), "9")).as("same lease writes again").isInstanceOf(Applied.class);
            assertThat(fenced.set(key, f(2), "zombie")).isEqualTo(new Stale(key, 2, 3, FencePolicy.SAME_OR_NEWER));
            assertThat(redis.get(key)).isEqualTo("9");
            assertThat(redis.get(fenceKeyOf(key))).isEqualTo("3");
        }

        @Test
        void strictlyNewerLetsEachLeaseWriteOnce() {
            String key = k("charge:7");
            Writes strict = withPolicy(FencePolicy.STRICTLY_NEWER);
            assertThat(strict.set(key, f(5), "charged")).isInstanceOf(Applied.class);
            assertThat(strict.set(key, f(5), "charged twice")).isInstanceOf(Stale.class);
            assertThat(redis.get(key)).isEqualTo("charged");
        }

        @Test
        void hsetKeepsTheFenceInTheHash() {
            String key = k("order:1");
            assertThat(fenced.hset(key, f(4), Map.of("status", "paid", "amount", "12.50"))).isInstanceOf(Applied.class);
            assertThat(redis.hgetall(key)).containsEntry("status", "paid").containsEntry("_fence", "4");
            assertThat(fenced.hset(key, f(1), Map.of("status", "zombie"))).isInstanceOfSatisfying(Stale.class,
                    s -> assertThat(s.currentFence()).isEqualTo(4));
            assertThat(redis.hget(key, "status")).isEqualTo("paid");
        }

        @Test
        void deletesKeepATombstoneForStringsAndHashes() {
            String s = k("doc:s");
            fenced.set(s, f(5), "v").orThrow();
            assertThat(fenced.delete(s, f(4))).isInstanceOf(Stale.class);
            assertThat(fenced.delete(s, f(6))).isInstanceOf(Applied.class);
            assertThat(redis.exists(s)).isZero();
            assertThat(fenced.set(s, f(5), "zombie")).as("a stale write cannot resurrect it").isInstanceOf(Stale.class);
            assertThat(redis.exists(s)).isZero();
            assertThat(fenced.delete(s, f(8))).as("re-delete raises the tombstone").isInstanceOf(Applied.class);
            assertThat(fenced.set(s, f(7), "zombie 7")).isInstanceOf(Stale.class);
            assertThat(fenced.set(s, f(9), "reborn")).isInstanceOf(Applied.class);

            String h = k("doc:h");
            fenced.hset(h, f(5), Map.of("a", "1", "b", "2")).orThrow();
            assertThat(fenced.delete(h, f(6))).isInstanceOf(Applied.class);
            assertThat(redis.hgetall(h)).as("only the fence field is left").isEqualTo(Map.of("_fence", "6"));
            assertThat(fenced.hset(h, f(5), Map.of("a", "zombie"))).isInstanceOf(Stale.class);
        }

        @ParameterizedTest
        @EnumSource(FencePolicy.class)
        void deleteOfAbsentKeyThenStaleCreateIsStale(FencePolicy policy) {
            Writes w = withPolicy(policy);
            String key = k("absent-del:") + policy;
            assertThat(w.delete(key, f(5))).isEqualTo(new Applied(key, 5));
            assertThat(redis.get(fenceKeyOf(key))).as("the tombstone").isEqualTo("5");
            assertThat(w.set(key, f(4), "zombie")).isEqualTo(new Stale(key, 4, 5, policy));
            assertThat(w.hset(key, f(4), Map.of("a", "zombie"))).isEqualTo(new Stale(key, 4, 5, policy));
            assertThat(w.eval("redis.call('SET', KEYS[1], 'zombie')", List.of(key), f(4), List.of()).outcome()).isInstanceOf(Stale.class);
            assertThat(w.claim(key, f(4))).isInstanceOf(Stale.class);
            assertThat(w.delete(key, f(4))).isInstanceOf(Stale.class);
            assertThat(redis.exists(key)).as("still absent").isZero();
            assertThat(redis.get(fenceKeyOf(key))).isEqualTo("5");
            if (policy == FencePolicy.SAME_OR_NEWER) {
                assertThat(w.set(key, f(5), "by lease 5")).isInstanceOf(Applied.class);
            } else {
                assertThat(w.set(key, f(5), "by lease 5")).isEqualTo(new Stale(key, 5, 5, policy));
                assertThat(w.set(key, f(6), "by lease 6")).isInstanceOf(Applied.class);
            }
            assertThat(redis.get(key)).startsWith("by lease");

            String hash = k("absent-del-h:") + policy;
            w.delete(hash, f(5)).orThrow();
            assertThat(w.hset(hash, f(4), Map.of("a", "zombie"))).isEqualTo(new Stale(hash, 4, 5, policy));
            assertThat(w.hset(hash, f(6), Map.of("a", "1"))).isInstanceOf(Applied.class);
            assertThat(redis.hgetall(hash)).isEqualTo(Map.of("a", "1", "_fence", "6"));
            assertThat(redis.exists(fenceKeyOf(hash))).as("the hash holds its fence now").isZero();
        }

        @ParameterizedTest
        @EnumSource(FencePolicy.class)
        void claimOfAbsentKeyThenStaleCreateIsStale(FencePolicy policy) {
            Writes w = withPolicy(policy);
            String key = k("absent-claim:") + policy;
            assertThat(w.claim(key, f(5))).as("no data, but the fence is recorded").isEqualTo(new NotFound(key));
            assertThat(w.set(key, f(4), "zombie")).isEqualTo(new Stale(key, 4, 5, policy));
            assertThat(w.hset(key, f(4), Map.of("a", "zombie"))).isEqualTo(new Stale(key, 4, 5, policy));
            assertThat(redis.exists(key)).isZero();
            assertThat(w.claim(key, f(6))).as("a newer claim raises the tombstone").isEqualTo(new NotFound(key));
            assertThat(w.set(key, f(5), "zombie of lease 5")).isEqualTo(new Stale(key, 5, 6, policy));
            assertThat(w.set(key, f(7), "created")).isInstanceOf(Applied.class);
            assertThat(w.claim(key, f(8))).as("claim of a key with data").isEqualTo(new Applied(key, 8));
            assertThat(w.set(key, f(7), "zombie")).isInstanceOf(Stale.class);
            assertThat(redis.get(key)).isEqualTo("created");

            String hash = k("claim-h:") + policy;
            w.hset(hash, f(3), Map.of("a", "1")).orThrow();
            w.delete(hash, f(4)).orThrow();
            assertThat(w.claim(hash, f(5))).as("a hash with only its fence field is a tombstone").isEqualTo(new NotFound(hash));
            assertThat(redis.hgetall(hash)).isEqualTo(Map.of("_fence", "5"));
            assertThat(w.hset(hash, f(4), Map.of("a", "zombie"))).isInstanceOf(Stale.class);
        }

        @Test
        void hashesStringsAndScriptsShareOneFencePerKey() {
            String key = k("shared");
            fenced.hset(key, f(5), Map.of("a", "1")).orThrow();
            assertThat(fenced.set(key, f(4), "zombie overwrites the hash")).isEqualTo(new Stale(key, 4, 5, FencePolicy.SAME_OR_NEWER));
            assertThat(fenced.eval("redis.call('HSET', KEYS[1], 'a', 'zombie')", List.of(key), f(4), List.of()).outcome())
                    .isInstanceOf(Stale.class);
            assertThat(redis.hgetall(key)).isEqualTo(Map.of("a", "1", "_fence", "5"));

            assertThat(fenced.eval("redis.call('HSET', KEYS[1], 'a', '2')", List.of(key), f(6), List.of()).outcome()).isInstanceOf(Applied.class);
            assertThat(fenced.hset(key, f(5), Map.of("a", "zombie"))).as("hset sees the script's fence").isInstanceOf(Stale.class);
            assertThat(fenced.claim(key, f(7))).isInstanceOf(Applied.class);
            assertThat(redis.hget(key, "_fence")).as("a hash records a claim in its fence field").isEqualTo("7");
            assertThat(fenced.hset(key, f(6), Map.of("a", "zombie"))).isInstanceOf(Stale.class);
            assertThat(redis.hget(key, "a")).isEqualTo("2");

            String s = k("shared-s");
            fenced.set(s, f(5), "v").orThrow();
            fenced.delete(s, f(6)).orThrow();
            assertThat(fenced.hset(s, f(5), Map.of("a", "zombie"))).as("a deleted string refuses an older hash").isInstanceOf(Stale.class);
            assertThat(redis.exists(s)).isZero();
        }

        @Test
        void aUserScriptThatFailsHalfwayStillLeavesItsFence() {
            String key = k("{half}:a");
            String halfway = "redis.call('SET', KEYS[1], ARGV[1])\nerror('validation after the write')";
            assertThatThrownBy(() -> fenced.eval(halfway, List.of(key), f(5), List.of("by lease 5")))
                    .isInstanceOf(dev.fenceguard.core.FenceGuardException.class).hasMessageContaining("fenced script failed: ERR")
                    .as("a script's own words may quote stored data").hasMessageNotContaining("validation after the write");
            assertThat(redis.get(key)).as("Redis keeps the write made before the error").isEqualTo("by lease 5");
            assertThat(fenced.set(key, f(4), "zombie")).as("and the fence that came with it").isInstanceOf(Stale.class);
            assertThat(redis.get(key)).isEqualTo("by lease 5");
        }

        @Test
        void fenceFieldNamesAreQuotedInsideScripts() {
            String key = k("odd-field");
            Writes odd = face(builder(conn).withFenceField("f\"]] ') -- \\ é").build().fencedWrites());
            odd.hset(key, f(5), Map.of("a", "1")).orThrow();
            assertThat(odd.eval("return 1", List.of(key), f(4), List.of()).outcome()).isInstanceOf(Stale.class);
            assertThat(odd.eval("return 1", List.of(key), f(5), List.of()).value()).contains(1L);
        }

        @Test
        void userScriptsRunAfterTheFenceCheckInTheSameScript() {
            String stock = k("{inv}:stock");
            redis.set(stock, "10");
            String decrement = "local n = tonumber(redis.call('GET', KEYS[1])) - tonumber(ARGV[1])\n"
                    + "if n < 0 then return redis.error_reply('insufficient stock') end\n"
                    + "redis.call('SET', KEYS[1], n)\nreturn n";
            FencedRedis.ScriptResult first = fenced.eval(decrement, List.of(stock), f(2), List.of("3"));
            assertThat(first.outcome()).isInstanceOf(Applied.class);
            assertThat(first.value()).contains(7L);
            FencedRedis.ScriptResult zombie = fenced.eval(decrement, List.of(stock), f(1), List.of("3"));
            assertThat(zombie.outcome()).isInstanceOf(Stale.class);
            assertThat(zombie.value()).isEmpty();
            assertThat(redis.get(stock)).isEqualTo("7");
        }

        @Test
        void wrongTypeIsInvalidArgumentAndWritesNothing() {
            String key = k("a-string");
            redis.set(key, "plain");
            assertThatThrownBy(() -> fenced.hset(key, f(1), Map.of("x", "y")))
                    .isInstanceOfSatisfying(dev.fenceguard.core.FenceGuardException.class,
                            e -> assertThat(e.code()).isEqualTo(dev.fenceguard.core.ErrorCode.INVALID_ARGUMENT));
            assertThat(redis.get(key)).isEqualTo("plain");
        }

        @Test
        void badInputFailsBeforeAnyIo() {
            StatefulRedisConnection<String, String> other = RedisSupport.shared().connect();
            Writes closedConnection = face(FenceGuardRedis.builder(other).withMetrics(LockMetrics.none()).build().fencedWrites());
            other.close(); // any command would now fail: argument errors must come first
            assertThatThrownBy(() -> closedConnection.set("", f(1), "v")).as("set of an empty key").hasMessage("key must not be empty");
            assertThatThrownBy(() -> closedConnection.set("k\uD800", f(1), "v")).as("set of a key with an unpaired surrogate")
                    .hasMessageContaining("unpaired surrogate");
            assertThatThrownBy(() -> closedConnection.set("k", f(1), null)).as("set of a null value")
                    .isInstanceOf(NullPointerException.class).hasMessage("value");
            assertThatThrownBy(() -> closedConnection.hset("k", f(1), Map.of())).as("hset of no field")
                    .hasMessage("hset needs at least one field");
            assertThatThrownBy(() -> closedConnection.hset("k", f(1), Map.of("_fence", "9"))).as("hset of the fence field")
                    .hasMessageContaining("fence field");
            assertThatThrownBy(() -> closedConnection.delete("fg:{orders}:lock", f(1))).as("delete of a lock's key")
                    .hasMessageContaining("fence-guard's own key space");
            assertThatThrownBy(() -> closedConnection.claim("k", null)).as("claim without a fence")
                    .isInstanceOf(NullPointerException.class).hasMessage("fence");
            assertThatThrownBy(() -> closedConnection.eval("return 1", List.of(), f(1), List.of())).as("eval without a key")
                    .hasMessageContaining("at least one key");
        }

        @Test
        void worksOnACluster() {
            try (StatefulRedisClusterConnection<String, String> c = RedisSupport.cluster().connect()) {
                Writes onCluster = face(FenceGuardRedis.builder(c).withMetrics(LockMetrics.none()).build().fencedWrites());
                for (int i = 0; i < 50; i++) {
                    String key = name() + ":item:" + i; // spread over all three masters
                    assertThat(onCluster.set(key, f(2), "v" + i)).isInstanceOf(Applied.class);
                    assertThat(onCluster.set(key, f(1), "zombie")).isInstanceOf(Stale.class);
                    assertThat(onCluster.hset(key + ":h", f(2), Map.of("f", "v"))).isInstanceOf(Applied.class);
                    assertThat(onCluster.delete(key, f(3))).isInstanceOf(Applied.class);
                    assertThat(c.sync().get(key)).isNull();
                    assertThat(onCluster.delete(key + ":never", f(3))).isInstanceOf(Applied.class);
                    assertThat(onCluster.set(key + ":never", f(2), "zombie")).isInstanceOf(Stale.class);
                    assertThat(onCluster.claim(key + ":claimed", f(3))).isInstanceOf(NotFound.class);
                    assertThat(onCluster.hset(key + ":claimed", f(2), Map.of("f", "zombie"))).isInstanceOf(Stale.class);
                    assertThat(onCluster.hset(key + ":h", f(4), Map.of("f", "v"))).isInstanceOf(Applied.class);
                    assertThat(onCluster.claim(key + ":h", f(5))).isInstanceOf(Applied.class);
                }
                WriteOutcome scripted = onCluster.eval("redis.call('SET', KEYS[1], ARGV[1])", List.of("{" + name() + "}:a"), f(1), List.of("1")).outcome();
                assertThat(scripted).isInstanceOf(Applied.class);
            }
        }
    }

    @Nested
    class Blocking extends OnEveryFace {
        @Override
        Writes face(FencedRedis writes) {
            return blocking(writes);
        }

        @Override
        String name() {
            return "blocking";
        }
    }

    @Nested
    class Async extends OnEveryFace {
        @Override
        Writes face(FencedRedis writes) {
            return async(writes);
        }

        @Override
        String name() {
            return "async";
        }

        @Test
        void badInputThrowsAtTheCallRatherThanFailingTheStage() {
            StatefulRedisConnection<String, String> other = RedisSupport.shared().connect();
            AsyncFencedRedis closedConnection = FenceGuardRedis.builder(other).withMetrics(LockMetrics.none()).build().fencedWrites().async();
            other.close();
            // A failed stage would be returned, not thrown, and these assertions would fail.
            assertThatThrownBy(() -> closedConnection.set("", f(1), "v")).as("set of an empty key").isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> closedConnection.hset("k", f(1), Map.of())).as("hset of no field")
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> closedConnection.delete("fg:fence:{0}:k", f(1))).as("delete of a fence key")
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> closedConnection.claim(null, f(1))).as("claim of a null key").isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> closedConnection.eval("return 1", List.of("k", "fg:{x}:lock"), f(1), List.of()))
                    .as("eval with a lock's key second").isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void aFailureOfRedisFailsTheStage() {
            String key = k("a-list");
            redis.rpush(key, "x");
            CompletableFuture<WriteOutcome> stage = guard.fencedWrites().async().hset(key, f(1), Map.of("a", "1")).toCompletableFuture();
            assertThat(stage).failsWithin(java.time.Duration.ofSeconds(30)).withThrowableOfType(ExecutionException.class)
                    .havingCause().isInstanceOfSatisfying(FenceGuardException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
        }

        @Test
        void aReadModifyWriteChainsClaimReadAndWriteWithoutWaiting() {
            // The asynchronous claim-first pattern: every step runs when the previous one answers, on Lettuce's threads.
            String stock = k("{sku-1}:stock");
            AsyncFencedRedis writes = guard.fencedWrites().async();
            writes.set(stock, f(1), "10").toCompletableFuture().join();
            CompletionStage<WriteOutcome> decremented = writes.claim(stock, f(2))
                    .thenCompose(claimed -> conn.async().get(stock))
                    .thenCompose(value -> writes.set(stock, f(2), Long.toString(Long.parseLong(value) - 2)));
            assertThat(join(decremented)).isEqualTo(new Applied(stock, 2));
            assertThat(join(writes.set(stock, f(1), "zombie"))).as("the old holder is refused").isInstanceOf(Stale.class);
            assertThat(redis.get(stock)).isEqualTo("8");
        }
    }
}
