package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome.Applied;
import dev.fenceguard.core.WriteOutcome.Stale;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.Ports;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Resource keys never reach a lock's keys or another resource's fence key (issue 17, item 3). */
class RedisKeySpaceTest {

    private static final String P = TestRedis.keyPrefix("keyspace");
    private static final Duration TTL = Duration.ofMinutes(5);
    private StatefulRedisConnection<String, String> conn;
    private RedisCommands<String, String> redis;
    private FenceGuardRedis guard;
    private RedisLockBackend locks;
    private FencedRedis fenced;

    @BeforeEach
    void open() {
        conn = RedisSupport.shared().connect();
        redis = conn.sync();
        // The fenced writes refuse this lock backend's key space without being told its prefix.
        guard = FenceGuardRedis.builder(conn).withKeyPrefix(P).withFenceStrategy(FenceStrategy.DENSE).withFenceKeyPrefix(P + "fence:")
                .withMetrics(LockMetrics.none()).build();
        locks = guard.lockBackend();
        fenced = guard.fencedWrites();
    }

    @AfterEach
    void close() {
        guard.close();
        conn.close();
    }

    @AfterAll
    static void cleanUp() {
        RedisSupport.deleteKeys(P);
    }

    private static FenceToken f(long v) {
        return FenceToken.of(v);
    }

    /** Every fenced operation on {@code key}, each expected to be refused. */
    private List<ThrowingCallable> everyOperationOn(FencedRedis target, String key) {
        return List.of(
                () -> target.set(key, f(1), "1"),
                () -> target.hset(key, f(1), Map.of("a", "1")),
                () -> target.delete(key, f(1)),
                () -> target.claim(key, f(1)),
                () -> target.eval("redis.call('SET', KEYS[1], ARGV[1])", List.of(key), f(1), List.of("1")),
                () -> target.eval("redis.call('DEL', KEYS[2])", List.of(P + "innocent", key), f(1), List.of()),
                () -> target.fenceKeyOf(key));
    }

    private void assertEveryOperationRefuses(FencedRedis target, String key, String why) {
        for (ThrowingCallable op : everyOperationOn(target, key)) {
            assertThatThrownBy(op).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("fence-guard's own key space").hasMessageContaining(why);
        }
    }

    private long acquireAndRelease(String key) {
        LockId id = LockId.random();
        long fence = BlockingBackend.of(locks).tryAcquire(LockKey.of(key), id, TTL).orElseThrow().fence();
        BlockingBackend.of(locks).release(LockKey.of(key), id);
        return fence;
    }

    @Test
    void aFencedWriteCannotRewindALocksDenseCounter() {
        for (int i = 0; i < 5; i++) {
            acquireAndRelease("orders");
        }
        String counter = locks.fenceKeyOf("orders");
        assertThat(redis.get(counter)).isEqualTo("5");

        // The attack from the issue: a fenced set of "1" on the counter rewound it, so the next holder got fence 2.
        assertEveryOperationRefuses(fenced, counter, "could rewind a lock's fence");

        assertThat(redis.get(counter)).isEqualTo("5");
        assertThat(acquireAndRelease("orders")).isEqualTo(6);
    }

    @Test
    void aFencedWriteCannotTakeOverOrReleaseAHeldLock() {
        LockId holder = LockId.random();
        long fence = BlockingBackend.of(locks).tryAcquire(LockKey.of("payments"), holder, TTL).orElseThrow().fence();
        String lockKey = locks.lockKeyOf("payments");
        String before = redis.get(lockKey);

        assertEveryOperationRefuses(fenced, lockKey, "take over a lock");

        assertThat(redis.get(lockKey)).isEqualTo(before);
        assertThat(BlockingBackend.of(locks).lookup(LockKey.of("payments")).orElseThrow().fence().value()).isEqualTo(fence);
        assertThat(BlockingBackend.of(locks).release(LockKey.of("payments"), holder)).isTrue();
    }

    @Test
    void aFencedWriteCannotLowerAnotherResourcesFence() {
        String stock = P + "stock:sku-1";
        fenced.set(stock, f(9), "41").orThrow();
        String fenceKey = fenced.fenceKeyOf(stock);

        // Before the fix a set of "1" here lowered the stored fence, and the zombie's write below was applied.
        assertEveryOperationRefuses(fenced, fenceKey, "could lower another key's fence");

        assertThat(redis.get(fenceKey)).isEqualTo("9");
        assertThat(fenced.set(stock, f(3), "zombie")).isInstanceOf(Stale.class);
        assertThat(redis.get(stock)).isEqualTo("41");
    }

    @Test
    void everyOperationRefusesInternalKeysBeforeAnyIo() {
        StatefulRedisConnection<String, String> other = RedisSupport.shared().connect();
        FencedRedis defaults = FenceGuardRedis.builder(other).withMetrics(LockMetrics.none()).build().fencedWrites();
        FencedRedis twoBackends = FenceGuardRedis.builder(other).withKeyPrefix("app:").withOtherLockKeyPrefixes("jobs:")
                .withMetrics(LockMetrics.none()).build().fencedWrites();
        other.close(); // any command would now fail: the refusal must come first
        assertEveryOperationRefuses(defaults, "fg:{orders}:fence", "lock backend with key prefix 'fg:'");
        assertEveryOperationRefuses(defaults, "fg:{orders}:lock", "lock backend with key prefix 'fg:'");
        assertEveryOperationRefuses(defaults, "fg:{", "keys starting with 'fg:{'");
        assertEveryOperationRefuses(defaults, "fg:fence:{1}:stock", "keys starting with 'fg:fence:{'");
        assertEveryOperationRefuses(twoBackends, "app:{a}:lock", "key prefix 'app:'");
        assertEveryOperationRefuses(twoBackends, "jobs:{b}:fence", "key prefix 'jobs:'");
    }

    @Test
    void theMessageSaysWhichNamespaceAndWhy() {
        assertThatThrownBy(() -> fenced.set(P + "{orders}:fence", f(1), "1")).hasMessage("key '" + P + "{orders}:fence' is in "
                + "fence-guard's own key space: keys starting with '" + P + "{' belong to the lock backend with key prefix '" + P
                + "', and writing one could rewind a lock's fence or take over a lock");
        assertThatThrownBy(() -> fenced.set(P + "fence:{0}:x", f(1), "1")).hasMessage("key '" + P + "fence:{0}:x' is in "
                + "fence-guard's own key space: keys starting with '" + P + "fence:{' hold the fences of guarded keys (fence key "
                + "prefix '" + P + "fence:'), and writing one could lower another key's fence");
    }

    @Test
    void keysThatOnlyLookLikeInternalKeysAreOrdinaryResources() {
        long issued = acquireAndRelease("lookalike");
        String counter = locks.fenceKeyOf("lookalike");
        Consumer<String> writable = key -> {
            assertThat(fenced.set(key, f(2), "v")).as(key).isInstanceOf(Applied.class);
            assertThat(fenced.set(key, f(1), "zombie")).as(key).isInstanceOf(Stale.class);
            assertThat(fenced.delete(key, f(3))).as(key).isInstanceOf(Applied.class);
        };
        writable.accept(P + "x{lookalike}:fence");          // a brace, but not right after the prefix
        writable.accept(P + "fence:x{0}:stock");            // under the fence prefix, but not its namespace
        writable.accept(P + "lookalike}:fence");
        writable.accept(P + "fence:");
        writable.accept("x" + P + "{lookalike}:fence");
        assertThat(redis.get(counter)).isEqualTo(Long.toString(issued));
        assertThat(acquireAndRelease("lookalike")).isEqualTo(issued + 1);
        RedisSupport.deleteKeys("x" + P);
    }

    @Test
    void aFenceKeyPrefixEqualToALockKeyPrefixIsRefusedBeforeConnecting() {
        // A client of a port where nothing listens: a refusal that came after connecting would be UNAVAILABLE.
        RedisClient nowhere = RedisClient.create(RedisURI.create("redis://127.0.0.1:" + Ports.refused()));
        try {
            assertThatThrownBy(() -> FenceGuardRedis.builder(nowhere).withFenceKeyPrefix("fg:").build()).as("fence prefix = default key prefix")
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("fence key prefix 'fg:' must differ from every lock key prefix [fg:]: a resource's fence key could "
                            + "then be a lock's key or fence counter");
            assertThatThrownBy(() -> FenceGuardRedis.builder(nowhere).withKeyPrefix("fg:fence:").build()).as("key prefix = default fence prefix")
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fence key prefix 'fg:fence:' must differ");
            assertThatThrownBy(() -> FenceGuardRedis.builder(nowhere).withKeyPrefix("a:").withOtherLockKeyPrefixes("b:", "c:")
                    .withFenceKeyPrefix("c:").build()).as("fence prefix = another backend's key prefix")
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fence key prefix 'c:' must differ from every lock "
                            + "key prefix [a:, b:, c:]");
        } finally {
            nowhere.shutdown();
        }
        assertThatThrownBy(() -> FenceGuardRedis.builder(conn).withOtherLockKeyPrefixes("a{")).hasMessageContaining("'{'");
        assertThatThrownBy(() -> FenceGuardRedis.builder(conn).withOtherLockKeyPrefixes((String) null))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FenceGuardRedis.builder(conn).withKeyPrefix("x}")).hasMessageContaining("'}'");
        assertThatThrownBy(() -> FenceGuardRedis.builder(conn).withFenceKeyPrefix("a{b")).hasMessageContaining("'{'");
        // Lettuce writes '?' for a lone surrogate: "a\uD800:" would be the key space of "a?:".
        assertThatThrownBy(() -> FenceGuardRedis.builder(conn).withKeyPrefix("a\uD800:")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("key prefix must be valid Unicode, found an unpaired surrogate U+D800 at index 1");
        assertThatThrownBy(() -> FenceGuardRedis.builder(conn).withFenceKeyPrefix("f\uDC00:")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("key prefix must be valid Unicode, found an unpaired surrogate U+DC00 at index 1");
        assertThatThrownBy(() -> FenceGuardRedis.builder(conn).withOtherLockKeyPrefixes("\uD83D")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("key prefix must be valid Unicode");
    }
}
