package dev.fenceguard.core.internal;

import java.time.Duration;

/**
 * Exponential backoff with full jitter: before retry {@code n} (0-based) wait a uniformly random time
 * in {@code [0, min(max, initial * 2^n)]}. Full jitter spreads contending clients out best (see the
 * AWS architecture blog, "Exponential Backoff And Jitter").
 */
public record Backoff(Duration initial, Duration max) {

    public Backoff {
        if (initial.isNegative() || initial.isZero()) {
            throw new IllegalArgumentException("backoff initial delay must be positive, was " + initial);
        }
        if (max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("backoff max delay must be at least the initial delay "
                    + initial + ", was " + max);
        }
    }

    /** The cap for retry {@code attempt}: {@code min(max, initial * 2^attempt)}, in nanoseconds. */
    public long ceilingNanos(int attempt) {
        long initialNanos = initial.toNanos();
        long maxNanos = max.toNanos();
        int shift = Math.min(Math.max(attempt, 0), 62);
        if (initialNanos > (maxNanos >> shift)) {
            return maxNanos;
        }
        return Math.min(maxNanos, initialNanos << shift);
    }

    /**
     * The delay before retry {@code attempt} for a uniform random {@code u} in {@code [0, 1)}.
     */
    public Duration delay(int attempt, double u) {
        if (!(u >= 0 && u < 1)) {
            throw new IllegalArgumentException("u must be in [0, 1), was " + u);
        }
        return Duration.ofNanos((long) (ceilingNanos(attempt) * u));
    }
}
