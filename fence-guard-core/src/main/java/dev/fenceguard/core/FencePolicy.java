package dev.fenceguard.core;

/**
 * The write rule: when does a write carrying fence {@code f} replace a resource whose stored fence
 * is {@code s}? A resource that was never fenced has {@code s = 0} (a SQL NULL counts as 0).
 *
 * <p>Every fenced-write helper of fence-guard applies exactly this rule, atomically on the server:
 * when the write is applied, the data and {@code s := f} change in one step; when it is rejected,
 * nothing changes. {@link #admits(long, long)} is the rule as a pure function, for tests and for
 * backends that evaluate it in memory.
 *
 * @since 0.1
 */
public enum FencePolicy {
    /**
     * Applied iff {@code f >= s}. The default: a holder may write many times under one lease, and
     * any newer lease wins.
     */
    SAME_OR_NEWER,
    /** Applied iff {@code f > s}: each lease writes at most once ("once per lease" effects). */
    STRICTLY_NEWER;

    /**
     * Whether a write carrying {@code presented} may replace a resource holding {@code stored}.
     *
     * @param presented the writer's fence, at least {@link FenceToken#MIN_VALUE}
     * @param stored the resource's fence; 0 when never fenced
     * @throws IllegalArgumentException if {@code presented < 1} or {@code stored < 0}
     */
    public boolean admits(long presented, long stored) {
        if (presented < FenceToken.MIN_VALUE) {
            throw new IllegalArgumentException("presented fence must be at least 1, was " + presented);
        }
        if (stored < 0) {
            throw new IllegalArgumentException("stored fence must not be negative, was " + stored);
        }
        return this == SAME_OR_NEWER ? presented >= stored : presented > stored;
    }

    /** {@link #admits(long, long)} for a token. */
    public boolean admits(FenceToken presented, long stored) {
        return admits(presented.value(), stored);
    }

    /**
     * The comparison operator of this rule as SQL or Lua spell it, with the presented fence on the
     * left: {@code >=} or {@code >}.
     */
    public String operator() {
        return this == SAME_OR_NEWER ? ">=" : ">";
    }
}
