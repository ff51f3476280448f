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

        assertThat(fenced.delete(P + "never-existed", f(1))).isInstanceOf(NotFound.class);
        assertThat(redis.exists(fenced.fenceKeyOf(P + "never-existed"))).as("nothing left behind").isZero();
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
            }
            WriteOutcome scripted = onCluster.eval("redis.call('SET', KEYS[1], ARGV[1])", List.of("{x}:a"), List.of("1"), f(1)).outcome();
            assertThat(scripted).isInstanceOf(Applied.class);
        }
    }
}
