package dev.fenceguard.core.internal;

import java.time.Duration;
import java.util.Objects;

/** Argument checks shared by the client and the backends, with messages that say what was wrong. */
public final class Checks {

    /** Longest TTL accepted: a lease is a lease, not a reservation for a year. */
    public static final Duration MAX_TTL = Duration.ofDays(30);

    private Checks() {}

    /**
     * @throws IllegalArgumentException unless {@code ttl} is whole milliseconds in 1 ms .. 30 days
     */
    public static Duration ttl(Duration ttl, Object key) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.compareTo(Duration.ofMillis(1)) < 0) {
            throw new IllegalArgumentException("ttl must be at least 1 ms, was " + ttl + " (lock '" + key + "')");
        }
        if (ttl.compareTo(MAX_TTL) > 0) {
            throw new IllegalArgumentException("ttl must be at most " + MAX_TTL + ", was " + ttl + " (lock '" + key + "')");
        }
        if (ttl.getNano() % 1_000_000 != 0) {
            // Backends count whole milliseconds; rounding would silently change the lease.
            throw new IllegalArgumentException("ttl must be a whole number of milliseconds, was " + ttl
                    + " (lock '" + key + "')");
        }
        return ttl;
    }

    /** Longest wait accepted (far below the 292 years at which nanosecond arithmetic overflows). */
    public static final Duration MAX_WAIT = Duration.ofDays(365);

    /** @throws IllegalArgumentException if {@code wait} is negative or longer than 365 days */
    public static Duration maxWait(Duration wait, Object key) {
        Objects.requireNonNull(wait, "maxWait");
        if (wait.isNegative()) {
            throw new IllegalArgumentException("maxWait must not be negative, was " + wait + " (lock '" + key + "')");
        }
        if (wait.compareTo(MAX_WAIT) > 0) {
            throw new IllegalArgumentException("maxWait must be at most " + MAX_WAIT + ", was " + wait + " (lock '" + key + "')");
        }
        return wait;
    }
}
