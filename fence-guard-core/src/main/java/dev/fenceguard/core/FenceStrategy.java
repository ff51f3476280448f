package dev.fenceguard.core;

/**
 * How a backend picks the next fence for a key.
 *
 * <p>Both strategies issue a fence greater than the last one the backend remembers. They differ in
 * what happens when the backend <em>forgets</em>: a Redis restart without persistence, a FLUSHALL, a
 * failover to a replica that had not yet received the latest fences (PostgreSQL with asynchronous
 * replication too).
 */
public enum FenceStrategy {
    /**
     * {@code last + 1}: fences 1, 2, 3, ... Readable and compact, but only as durable as the counter:
     * if the backend loses it, fences start again from a lower value and zombies win. Use it where the
     * counter is durably and synchronously stored.
     */
    DENSE,
    /**
     * {@code max(last + 1, (now_ms - 2025-01-01) * 100)} by the backend's clock: a backend that lost
     * its counter still issues fences above every earlier one, as long as its clock did not go back by
     * more than the time since those fences were issued (100 fences per millisecond of headroom).
     * Values stay below the {@link FenceToken#WARN_THRESHOLD} until about 2053.
     */
    CLOCK_FLOORED;

    /** 2025-01-01T00:00:00Z in Unix milliseconds: the custom epoch of {@link #CLOCK_FLOORED}. */
    public static final long EPOCH_MILLIS = 1_735_689_600_000L;

    /** Fences per millisecond in the clock floor. */
    public static final long PER_MILLISECOND = 100;

    /** The clock floor for a backend clock reading {@code unixMillis}. */
    public static long floorAt(long unixMillis) {
        return Math.max(0, unixMillis - EPOCH_MILLIS) * PER_MILLISECOND;
    }
}
