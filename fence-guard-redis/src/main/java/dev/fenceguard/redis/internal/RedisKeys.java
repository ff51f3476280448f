package dev.fenceguard.redis.internal;

import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.internal.Text;
import io.lettuce.core.cluster.SlotHash;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Names of fence-guard's Redis keys.
 *
 * <p>Lock {@code k} uses {@code <prefix>{<escaped k>}:lock} and {@code <prefix>{<escaped k>}:fence}.
 * Escaping replaces {@code %}, {@code {} and {@code }} by {@code %25}, {@code %7B}, {@code %7D}, so
 * the braces always delimit exactly the escaped key: both keys share one hash tag (one Cluster slot),
 * and distinct lock keys give distinct Redis keys (escaping is injective and the suffix follows the
 * closing brace).
 *
 * <p>The idempotency entry of key {@code k} is {@code <prefix>{<escaped k>}:idem}, in the slot of the
 * lock of the same name.
 *
 * <p>A guarded resource key {@code r} keeps its fence in {@code fg:fence:{<tag>}:<r>}, where
 * {@code <tag>} is a short string chosen to hash to the same Cluster slot as {@code r}, so scripts
 * can touch both in one slot whatever {@code r} looks like.
 *
 * <p>Every internal key starts with <code>&lt;prefix&gt;{</code>: that is the namespace of a prefix. Prefixes hold
 * no braces, so two namespaces are disjoint unless their prefixes are equal.
 */
public final class RedisKeys {

    /** Default prefix of a lock backend's keys. */
    public static final String DEFAULT_LOCK_PREFIX = "fg:";
    /** Default prefix of the fence keys of guarded resource keys. */
    public static final String DEFAULT_FENCE_PREFIX = "fg:fence:";
    /** Default prefix of the flight store's keys and channel. */
    public static final String DEFAULT_FLIGHT_PREFIX = "fg-sf:";

    private RedisKeys() {}

    /** <code>&lt;prefix&gt;{</code>: every internal key under {@code prefix} starts with it. */
    public static String namespace(String prefix) {
        return prefix + "{";
    }

    /**
     * Validates a key prefix: anything without braces or NUL, at most 64 characters, valid Unicode (Lettuce
     * writes {@code '?'} for an unpaired surrogate, so {@code "a\uD800:"} would be the key space of {@code "a?:"}).
     */
    public static String requirePrefix(String prefix) {
        if (prefix == null) {
            throw new IllegalArgumentException("key prefix must not be null");
        }
        Text.requireValidUnicode("key prefix", prefix);
        if (prefix.length() > 64 || prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0 || prefix.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("key prefix must be at most 64 characters without '{', '}' or NUL, was '"
                    + (prefix.length() > 64 ? prefix.substring(0, 64) + "..." : prefix) + "'");
        }
        return prefix;
    }

    /** {@code %}, {@code {}, {@code }} percent-escaped. */
    public static String escape(String key) {
        if (key.indexOf('%') < 0 && key.indexOf('{') < 0 && key.indexOf('}') < 0) {
            return key; // the common case: nothing to escape, no copy
        }
        StringBuilder out = new StringBuilder(key.length() + 8);
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            switch (c) {
                case '%' -> out.append("%25");
                case '{' -> out.append("%7B");
                case '}' -> out.append("%7D");
                default -> out.append(c);
            }
        }
        return out.toString();
    }

    /** {@code <prefix>{<escaped key>}}: the common part of a lock's two keys. */
    public static String tag(String prefix, LockKey key) {
        return prefix + "{" + escape(key.value()) + "}";
    }

    public static String lockKey(String prefix, LockKey key) {
        return tag(prefix, key) + ":lock";
    }

    public static String fenceKey(String prefix, LockKey key) {
        return tag(prefix, key) + ":fence";
    }

    /** The idempotency entry named {@code key}: same hash tag as the lock of the same name. */
    public static String idempotencyKey(String prefix, LockKey key) {
        return tag(prefix, key) + ":idem";
    }

    /** The fence key of a guarded resource key: same slot as {@code resourceKey}. */
    public static String resourceFenceKey(String prefix, String resourceKey) {
        return prefix + "{" + SlotTags.of(SlotHash.getSlot(resourceKey)) + "}:" + resourceKey;
    }

    /**
     * For each Cluster slot, a short string that hashes to it: the first of {@code 0, 1, .., z, 10, ..}
     * (base 36) that does. Part of the stored layout, so it must never change. The table is filled by one
     * scan of that sequence, resumed only as far as a slot not yet found needs (about 16,000 CRC16s for the
     * first key, less and less after), instead of all at once on first use (about 160,000, 50 ms in the
     * first fenced write of a process). {@link #fillAll()} finishes the scan, for warm-ups.
     */
    static final class SlotTags {
        private static final AtomicReferenceArray<String> TAGS = new AtomicReferenceArray<>(SlotHash.SLOT_COUNT);
        private static long next; // the scan's next candidate; guarded by SlotTags.class
        private static int missing = SlotHash.SLOT_COUNT; // guarded by SlotTags.class

        static String of(int slot) {
            String tag = TAGS.get(slot);
            return tag != null ? tag : scanUntil(slot);
        }

        static void fillAll() {
            scanUntil(-1);
        }

        /** Resumes the scan until {@code slot} has its tag (every slot, for -1). */
        private static synchronized String scanUntil(int slot) {
            while (missing > 0 && (slot < 0 || TAGS.get(slot) == null)) {
                String candidate = Long.toString(next++, 36);
                int s = SlotHash.getSlot(candidate);
                if (TAGS.get(s) == null) {
                    TAGS.set(s, candidate);
                    missing--;
                }
            }
            return slot < 0 ? null : TAGS.get(slot);
        }
    }

    /** Finds the fence-key tag of every Cluster slot now, so that no later fenced write pays for it. */
    public static void fillSlotTags() {
        SlotTags.fillAll();
    }
}
