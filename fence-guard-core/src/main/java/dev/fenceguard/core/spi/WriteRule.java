package dev.fenceguard.core.spi;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.Text;
import java.util.Objects;

/**
 * The write rule in one place, for every fenced-write helper (PostgreSQL, Redis, Firestore, and any a
 * user writes): how a fence is stored and read back, whether a presented fence is admitted, and the
 * outcome of a rejection, counted once in the metrics. The atomic check-and-write itself happens on the
 * server (a statement, a script, a transaction); this class only decides and describes.
 *
 * <p>Stored fences: {@code null}, a missing value and any all-zero text count as 0 ("never fenced");
 * numbers are taken as they are; text must be the 15-digit form of {@link FenceToken#toString()}
 * (surrounding blanks, as a {@code CHAR(15)} column may pad, are ignored). Immutable and thread-safe.
 *
 * @param policy the rule
 * @param encoding how the resource stores fences
 * @param metrics where rejections are counted
 * @param resourceType a bounded metric tag: {@code postgres}, {@code redis}, {@code firestore}, ...
 */
public record WriteRule(FencePolicy policy, FenceEncoding encoding, LockMetrics metrics, String resourceType) {

    public WriteRule {
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(encoding, "encoding");
        Objects.requireNonNull(metrics, "metrics");
        Objects.requireNonNull(resourceType, "resourceType");
    }

    /** The value to store for {@code fence}: a {@code Long}, or the 15-digit text. */
    public Object encode(FenceToken fence) {
        return encoding == FenceEncoding.INTEGER ? (Object) fence.value() : fence.toString();
    }

    /** The stored value that means "never fenced" in this encoding. */
    public Object zero() {
        return encoding == FenceEncoding.INTEGER ? (Object) 0L : "000000000000000";
    }

    /**
     * The fence a resource holds, from its stored value (see the class comment).
     *
     * @throws IllegalStateException if the stored value is neither a number nor a fence's text form
     */
    public static long decode(Object stored) {
        if (stored == null) {
            return 0;
        }
        if (stored instanceof Number n) {
            return n.longValue();
        }
        String text = stored.toString().strip();
        if (!text.isEmpty() && text.chars().allMatch(c -> c == '0')) {
            return 0;
        }
        try {
            return FenceToken.parse(text).value();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("the stored fence is not a fence: '" + (text.length() > 20 ? text.substring(0, 20) + "..." : text)
                    + "' (expected a number or 15 digits)", e);
        }
    }

    /** Whether {@code presented} may replace {@code stored} under the policy. */
    public boolean admits(FenceToken presented, long stored) {
        return policy.admits(presented, stored);
    }

    /** A rejection of {@code presented} by a resource holding {@code stored}; counted once in the metrics. */
    public WriteOutcome.Stale stale(String resource, FenceToken presented, long stored) {
        metrics.staleWriteRejected(resourceType);
        return new WriteOutcome.Stale(resource, presented.value(), stored, policy);
    }

    /**
     * Checks a resource key or id given as text: not null, not empty, valid Unicode (no unpaired
     * surrogate, which no store can round-trip).
     *
     * @return the key
     * @throws IllegalArgumentException saying what is wrong (before any I/O)
     */
    public static String checkKey(String what, String key) {
        Objects.requireNonNull(key, what);
        if (key.isEmpty()) {
            throw new IllegalArgumentException(what + " must not be empty");
        }
        Text.requireValidUnicode(what, key);
        return key;
    }

    /**
     * {@link #checkKey} for stores that cannot hold NUL in text (PostgreSQL).
     *
     * @throws IllegalArgumentException if the key is invalid or contains U+0000
     */
    public static String checkTextKey(String what, String key) {
        checkKey(what, key);
        if (key.indexOf('\0') >= 0) {
            throw new IllegalArgumentException(what + " must not contain NUL (U+0000), which PostgreSQL cannot store in text");
        }
        return key;
    }
}
