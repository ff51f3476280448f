package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class FencedRedisTest {

    private static final String P = TestRedis.keyPrefix("fenced");
    private StatefulRedisConnection<String, String> conn;
    private RedisCommands<String, String> redis;
    private FencedRedis fenced;

    @BeforeEach
    void open() {
        conn = RedisSupport.shared().connect();
        redis = conn.sync();
        fenced = FencedRedis.builder(conn).withFenceKeyPrefix(P + "fence:").withMetrics(LockMetrics.none()).build();
    }

    @AfterEach
    void close() {
        fenced.close();
        conn.close();
    }

    @AfterAll
    static void cleanUp() {
        RedisSupport.deleteKeys(P);
    }

    private static FenceToken f(long v) {
        return FenceToken.of(v);
    }

    @Test
    void setAppliesNewerOrEqualFencesAndRejectsOlderOnes() {
        String key = P + "stock:sku-1";
        assertThat(fenced.set(key, "10", f(3))).isEqualTo(new Applied(key, 3));
        assertThat(fenced.set(key, "9", f(3))).as("same lease writes again").isInstanceOf(Applied.class);
        assertThat(fenced.set(key, "zombie", f(2))).isEqualTo(new Stale(key, 2, 3, FencePolicy.SAME_OR_NEWER));
        assertThat(redis.get(key)).isEqualTo("9");
        assertThat(redis.get(fenced.fenceKeyOf(key))).isEqualTo("3");
    }

    @Test
    void strictlyNewerLetsEachLeaseWriteOnce() {
        String key = P + "charge:7";
        FencedRedis strict = FencedRedis.builder(conn).withPolicy(FencePolicy.STRICTLY_NEWER).withFenceKeyPrefix(P + "fence:")
                .withMetrics(LockMetrics.none()).build();
        assertThat(strict.set(key, "charged", f(5))).isInstanceOf(Applied.class);
        assertThat(strict.set(key, "charged twice", f(5))).isInstanceOf(Stale.class);
        assertThat(redis.get(key)).isEqualTo("charged");
    }

    @Test
    void hsetKeepsTheFenceInTheHash() {
        String key = P + "order:1";
        assertThat(fenced.hset(key, Map.of("status", "paid", "amount", "12.50"), f(4))).isInstanceOf(Applied.class);
        assertThat(redis.hgetall(key)).containsEntry("status", "paid").containsEntry("_fence", "4");
        assertThat(fenced.hset(key, Map.of("status", "zombie"), f(1))).isInstanceOfSatisfying(Stale.class,
                s -> assertThat(s.currentFence()).isEqualTo(4));
        assertThat(redis.hget(key, "status")).isEqualTo("paid");
    }

    @Test
    void deletesKeepATombstoneForStringsAndHashes() {
        String s = P + "doc:s";
        fenced.set(s, "v", f(5)).orThrow();
        assertThat(fenced.delete(s, f(4))).isInstanceOf(Stale.class);
        assertThat(fenced.delete(s, f(6))).isInstanceOf(Applied.class);
        assertThat(redis.exists(s)).isZero();
        assertThat(fenced.set(s, "zombie", f(5))).as("a stale write cannot resurrect it").isInstanceOf(Stale.class);
        assertThat(redis.exists(s)).isZero();
        assertThat(fenced.delete(s, f(8))).as("re-delete raises the tombstone").isInstanceOf(Applied.class);
        assertThat(fenced.set(s, "zombie 7", f(7))).isInstanceOf(Stale.class);
        assertThat(fenced.set(s, "reborn", f(9))).isInstanceOf(Applied.class);

        String h = P + "doc:h";
        fenced.hset(h, Map.of("a", "1", "b", "2"), f(5)).orThrow();
        assertThat(fenced.delete(h, f(6))).isInstanceOf(Applied.class);
        assertThat(redis.hgetall(h)).as("only the fence field is left").isEqualTo(Map.of("_fence", "6"));
        assertThat(fenced.hset(h, Map.of("a", "zombie"), f(5))).isInstanceOf(Stale.class);
    }

    private FencedRedis withPolicy(FencePolicy policy) {
        return FencedRedis.builder(conn).withPolicy(policy).withFenceKeyPrefix(P + "fence:").withMetrics(LockMetrics.none()).build();
    }

    @ParameterizedTest
    @EnumSource(FencePolicy.class)
    void deleteOfAbsentKeyThenStaleCreateIsStale(FencePolicy policy) {
        FencedRedis w = withPolicy(policy);
        String key = P + "absent-del:" + policy;
        assertThat(w.delete(key, f(5))).isEqualTo(new Applied(key, 5));
        assertThat(redis.get(w.fenceKeyOf(key))).as("the tombstone").isEqualTo("5");
        assertThat(w.set(key, "zombie", f(4))).isEqualTo(new Stale(key, 4, 5, policy));
        assertThat(w.hset(key, Map.of("a", "zombie"), f(4))).isEqualTo(new Stale(key, 4, 5, policy));
        assertThat(w.eval("redis.call('SET', KEYS[1], 'zombie')", List.of(key), List.of(), f(4)).outcome()).isInstanceOf(Stale.class);
        assertThat(w.claim(key, f(4))).isInstanceOf(Stale.class);
        assertThat(w.delete(key, f(4))).isInstanceOf(Stale.class);
        assertThat(redis.exists(key)).as("still absent").isZero();
        assertThat(redis.get(w.fenceKeyOf(key))).isEqualTo("5");
        if (policy == FencePolicy.SAME_OR_NEWER) {
            assertThat(w.set(key, "by lease 5", f(5))).isInstanceOf(Applied.class);
        } else {
            assertThat(w.set(key, "by lease 5", f(5))).isEqualTo(new Stale(key, 5, 5, policy));
            assertThat(w.set(key, "by lease 6", f(6))).isInstanceOf(Applied.class);
        }
        assertThat(redis.get(key)).startsWith("by lease");

        String hash = P + "absent-del-h:" + policy;
        w.delete(hash, f(5)).orThrow();
        assertThat(w.hset(hash, Map.of("a", "zombie"), f(4))).isEqualTo(new Stale(hash, 4, 5, policy));
        assertThat(w.hset(hash, Map.of("a", "1"), f(6))).isInstanceOf(Applied.class);
        assertThat(redis.hgetall(hash)).isEqualTo(Map.of("a", "1", "_fence", "6"));
        assertThat(redis.exists(w.fenceKeyOf(hash))).as("the hash holds its fence now").isZero();
    }

    @ParameterizedTest
    @EnumSource(FencePolicy.class)
    void claimOfAbsentKeyThenStaleCreateIsStale(FencePolicy policy) {
        FencedRedis w = withPolicy(policy);
        String key = P + "absent-claim:" + policy;
        assertThat(w.claim(key, f(5))).as("no data, but the fence is recorded").isEqualTo(new NotFound(key));
        assertThat(w.set(key, "zombie", f(4))).isEqualTo(new Stale(key, 4, 5, policy));
        assertThat(w.hset(key, Map.of("a", "zombie"), f(4))).isEqualTo(new Stale(key, 4, 5, policy));
        assertThat(redis.exists(key)).isZero();
        assertThat(w.claim(key, f(6))).as("a newer claim raises the tombstone").isEqualTo(new NotFound(key));
        assertThat(w.set(key, "zombie of lease 5", f(5))).isEqualTo(new Stale(key, 5, 6, policy));
        assertThat(w.set(key, "created", f(7))).isInstanceOf(Applied.class);
        assertThat(w.claim(key, f(8))).as("claim of a key with data").isEqualTo(new Applied(key, 8));
        assertThat(w.set(key, "zombie", f(7))).isInstanceOf(Stale.class);
        assertThat(redis.get(key)).isEqualTo("created");

        String hash = P + "claim-h:" + policy;
        w.hset(hash, Map.of("a", "1"), f(3)).orThrow();
        w.delete(hash, f(4)).orThrow();
        assertThat(w.claim(hash, f(5))).as("a hash with only its fence field is a tombstone").isEqualTo(new NotFound(hash));
        assertThat(redis.hgetall(hash)).isEqualTo(Map.of("_fence", "5"));
        assertThat(w.hset(hash, Map.of("a", "zombie"), f(4))).isInstanceOf(Stale.class);
    }

    @Test
    void hashesStringsAndScriptsShareOneFencePerKey() {
        String key = P + "shared";
        fenced.hset(key, Map.of("a", "1"), f(5)).orThrow();
        assertThat(fenced.set(key, "zombie overwrites the hash", f(4))).isEqualTo(new Stale(key, 4, 5, FencePolicy.SAME_OR_NEWER));
        assertThat(fenced.eval("redis.call('HSET', KEYS[1], 'a', 'zombie')", List.of(key), List.of(), f(4)).outcome())
                .isInstanceOf(Stale.class);
        assertThat(redis.hgetall(key)).isEqualTo(Map.of("a", "1", "_fence", "5"));

        assertThat(fenced.eval("redis.call('HSET', KEYS[1], 'a', '2')", List.of(key), List.of(), f(6)).outcome()).isInstanceOf(Applied.class);
        assertThat(fenced.hset(key, Map.of("a", "zombie"), f(5))).as("hset sees the script's fence").isInstanceOf(Stale.class);
        assertThat(fenced.claim(key, f(7))).isInstanceOf(Applied.class);
        assertThat(redis.hget(key, "_fence")).as("a hash records a claim in its fence field").isEqualTo("7");
        assertThat(fenced.hset(key, Map.of("a", "zombie"), f(6))).isInstanceOf(Stale.class);
        assertThat(redis.hget(key, "a")).isEqualTo("2");

        String s = P + "shared-s";
        fenced.set(s, "v", f(5)).orThrow();
        fenced.delete(s, f(6)).orThrow();
        assertThat(fenced.hset(s, Map.of("a", "zombie"), f(5))).as("a deleted string refuses an older hash").isInstanceOf(Stale.class);
        assertThat(redis.exists(s)).isZero();
    }

    @Test
    void aUserScriptThatFailsHalfwayStillLeavesItsFence() {
        String key = P + "{half}:a";
        String halfway = "redis.call('SET', KEYS[1], ARGV[1])\nerror('validation after the write')";
        assertThatThrownBy(() -> fenced.eval(halfway, List.of(key), List.of("by lease 5"), f(5)))
                .isInstanceOf(dev.fenceguard.core.FenceGuardException.class).hasMessageContaining("validation after the write");
        assertThat(redis.get(key)).as("Redis keeps the write made before the error").isEqualTo("by lease 5");
        assertThat(fenced.set(key, "zombie", f(4))).as("and the fence that came with it").isInstanceOf(Stale.class);
        assertThat(redis.get(key)).isEqualTo("by lease 5");
    }

    @Test
    void fenceFieldNamesAreQuotedInsideScripts() {
        String key = P + "odd-field";
        FencedRedis odd = FencedRedis.builder(conn).withFenceField("f\"]] ') -- \\ é").withFenceKeyPrefix(P + "fence:")
                .withMetrics(LockMetrics.none()).build();
        odd.hset(key, Map.of("a", "1"), f(5)).orThrow();
        assertThat(odd.eval("return 1", List.of(key), List.of(), f(4)).outcome()).isInstanceOf(Stale.class);
        assertThat(odd.eval("return 1", List.of(key), List.of(), f(5)).value()).contains(1L);
    }

    @Test
    void userScriptsRunAfterTheFenceCheckInTheSameScript() {
        String stock = P + "{inv}:stock";
        redis.set(stock, "10");
        String decrement = "local n = tonumber(redis.call('GET', KEYS[1])) - tonumber(ARGV[1])\n"
                + "if n < 0 then return redis.error_reply('insufficient stock') end\n"
                + "redis.call('SET', KEYS[1], n)\nreturn n";
        FencedRedis.ScriptResult first = fenced.eval(decrement, List.of(stock), List.of("3"), f(2));
        assertThat(first.outcome()).isInstanceOf(Applied.class);
        assertThat(first.value()).contains(7L);
        FencedRedis.ScriptResult zombie = fenced.eval(decrement, List.of(stock), List.of("3"), f(1));
        assertThat(zombie.outcome()).isInstanceOf(Stale.class);
        assertThat(zombie.value()).isEmpty();
        assertThat(redis.get(stock)).isEqualTo("7");
    }

    @Test
    void wrongTypeIsInvalidArgumentAndWritesNothing() {
        String key = P + "a-string";
        redis.set(key, "plain");
        assertThatThrownBy(() -> fenced.hset(key, Map.of("x", "y"), f(1)))
                .isInstanceOfSatisfying(dev.fenceguard.core.FenceGuardException.class,
                        e -> assertThat(e.code()).isEqualTo(dev.fenceguard.core.ErrorCode.INVALID_ARGUMENT));
        assertThat(redis.get(key)).isEqualTo("plain");
    }

    @Test
    void badInputFailsBeforeAnyIo() {
        FencedRedis closedConnection;
        StatefulRedisConnection<String, String> other = RedisSupport.shared().connect();
        closedConnection = FencedRedis.builder(other).withMetrics(LockMetrics.none()).build();
        other.close(); // any command would now fail: argument errors must come first
        assertThatThrownBy(() -> closedConnection.set("", "v", f(1))).hasMessage("key must not be empty");
        assertThatThrownBy(() -> closedConnection.set("k\uD800", "v", f(1))).hasMessageContaining("unpaired surrogate");
        assertThatThrownBy(() -> closedConnection.hset("k", Map.of(), f(1))).hasMessage("hset needs at least one field");
        assertThatThrownBy(() -> closedConnection.hset("k", Map.of("_fence", "9"), f(1))).hasMessageContaining("fence field");
        assertThatThrownBy(() -> closedConnection.eval("return 1", List.of(), List.of(), f(1))).hasMessageContaining("at least one key");
        assertThatThrownBy(() -> FencedRedis.builder(conn).withFenceKeyPrefix("a{b")).hasMessageContaining("'{'");
        assertThatThrownBy(() -> RedisLockBackend.builder(conn).withKeyPrefix("x}")).hasMessageContaining("'}'");
    }

    @Test
    void worksOnACluster() {
        try (StatefulRedisClusterConnection<String, String> c = RedisSupport.cluster().connect()) {
            FencedRedis onCluster = FencedRedis.builder(c).withMetrics(LockMetrics.none()).build();
            for (int i = 0; i < 50; i++) {
                String key = "item:" + i; // spread over all three masters
                assertThat(onCluster.set(key, "v" + i, f(2))).isInstanceOf(Applied.class);
                assertThat(onCluster.set(key, "zombie", f(1))).isInstanceOf(Stale.class);
                assertThat(onCluster.hset(key + ":h", Map.of("f", "v"), f(2))).isInstanceOf(Applied.class);
                assertThat(onCluster.delete(key, f(3))).isInstanceOf(Applied.class);
                assertThat(c.sync().get(key)).isNull();
                assertThat(onCluster.delete(key + ":never", f(3))).isInstanceOf(Applied.class);
                assertThat(onCluster.set(key + ":never", "zombie", f(2))).isInstanceOf(Stale.class);
                assertThat(onCluster.claim(key + ":claimed", f(3))).isInstanceOf(NotFound.class);
                assertThat(onCluster.hset(key + ":claimed", Map.of("f", "zombie"), f(2))).isInstanceOf(Stale.class);
                assertThat(onCluster.hset(key + ":h", Map.of("f", "v"), f(4))).isInstanceOf(Applied.class);
                assertThat(onCluster.claim(key + ":h", f(5))).isInstanceOf(Applied.class);
            }
            WriteOutcome scripted = onCluster.eval("redis.call('SET', KEYS[1], ARGV[1])", List.of("{x}:a"), List.of("1"), f(1)).outcome();
            assertThat(scripted).isInstanceOf(Applied.class);
        }
    }
}
