package dev.fenceguard.core;

/**
 * How a backend picks the next fence for a key.
 *
 * <p>Both strategies issue a fence greater than the last one the backend remembers. They differ in
 * what happens when the backend <em>forgets</em>: a Redis restart without persistence, a FLUSHALL, a
 * failover to a replica that had not yet received the latest fences (PostgreSQL with asynchronous
 * replication too).
 *
 * @since 0.1
 */
public enum FenceStrategy {
    /**
     * {@code last + 1}: fences 1, 2, 3, ... Readable and compact, but only as durable as the counter:
     * if the backend loses it, fences start again from a lower value and zombies win. Use it where the
     * counter is durably and synchronously stored.
     */
    DENSE,
    /**
     * {@code max(last + 1, floor)} where the floor is the backend's clock in 10 µs ticks since
     * 2025-01-01 ({@code (now_µs - 2025-01-01) / 10}, that is 100 fences per millisecond): a backend
     * that lost its counter still issues fences above every earlier one, as long as its clock did not
     * go back by more than the time since those fences were issued. Values stay below the
     * {@link FenceToken#WARN_THRESHOLD} until about 2053.
     *
     * <p>"Above every earlier one" holds even when the loss and the next acquisition fall in the same
     * millisecond, because two rules keep the floor ahead of every fence issued:
     * <ol>
     *   <li>no fence is issued before the backend's floor has reached it, so a fence is never above the
     *       floor of the instant it was issued at;</li>
     *   <li>a key without a counter (lost, or never locked) takes its first fence from the tick after
     *       the one the acquisition started in, which is above every fence issued up to that tick.</li>
     * </ol>
     * On Redis both are enforced inside the acquire script by waiting on the server's {@code TIME} for
     * at most a tick (10 µs) in the common case and a millisecond at worst (a counter further ahead
     * than a millisecond means the clock went back; the counter alone then keeps fences rising while it
     * survives). On PostgreSQL they hold because one acquisition of a key (a committed statement) and a
     * data loss (failover, restore) each take far longer than a tick.
     *
     * <p>Compatibility: earlier 0.1 snapshots floored by whole milliseconds ({@code now_ms * 100}); the
     * tick floor is never below that at the same instant, so upgrading keeps fences rising.
     */
    CLOCK_FLOORED
}
