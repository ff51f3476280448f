package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockKey;
import dev.fenceguard.redis.internal.RedisKeys;
import io.lettuce.core.cluster.SlotHash;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** No user key can reach another key's Redis keys, and each lock's keys share one Cluster slot. */
class RedisKeyProperties {

    @Provide
    Arbitrary<String> adversarialKeys() {
        Arbitrary<String> pieces = Arbitraries.of("{", "}", "{}", ":", "%", "%7B", "%7D", "%25", "fg:", "lock", "fence",
                ":lock", ":fence", "}:lock", "{fg:", "a", "é", "e\u0301", "\uD83D\uDD12", " ", "*", "\\", "fg:fence:");
        return pieces.list().ofMinSize(1).ofMaxSize(8).map(l -> String.join("", l));
    }

    @Property(tries = 2000)
    void distinctLockKeysNeverShareARedisKey(@ForAll("adversarialKeys") String a, @ForAll("adversarialKeys") String b) {
        LockKey ka = LockKey.of(a);
        LockKey kb = LockKey.of(b);
        Set<String> redisKeys = new HashSet<>(List.of(RedisKeys.lockKey("fg:", ka), RedisKeys.fenceKey("fg:", ka)));
        boolean sameLock = ka.equals(kb);
        assertThat(redisKeys.contains(RedisKeys.lockKey("fg:", kb))).isEqualTo(sameLock);
        assertThat(redisKeys.contains(RedisKeys.fenceKey("fg:", kb))).isEqualTo(sameLock);
        assertThat(RedisKeys.lockKey("fg:", ka)).isNotEqualTo(RedisKeys.fenceKey("fg:", kb));
    }

    @Property(tries = 2000)
    void bothKeysOfALockAreInOneSlotTaggedByTheWholeKey(@ForAll("adversarialKeys") String raw) {
        LockKey key = LockKey.of(raw);
        String lock = RedisKeys.lockKey("fg:", key);
        String fence = RedisKeys.fenceKey("fg:", key);
        assertThat(SlotHash.getSlot(lock)).isEqualTo(SlotHash.getSlot(fence));
        // The hash tag is exactly the escaped key: Redis hashes what is between the first '{' and the next '}'.
        int open = lock.indexOf('{');
        int close = lock.indexOf('}', open + 1);
        assertThat(lock.substring(open + 1, close)).isEqualTo(RedisKeys.escape(key.value()));
    }

    @Property(tries = 2000)
    void resourceFenceKeysShareTheResourcesSlotAndNeverCollide(@ForAll("adversarialKeys") String a, @ForAll("adversarialKeys") String b) {
        String fa = RedisKeys.resourceFenceKey("fg:fence:", a);
        assertThat(SlotHash.getSlot(fa)).isEqualTo(SlotHash.getSlot(a));
        assertThat(fa.equals(RedisKeys.resourceFenceKey("fg:fence:", b))).isEqualTo(a.equals(b));
        assertThat(fa).isNotEqualTo(a);
    }
}
