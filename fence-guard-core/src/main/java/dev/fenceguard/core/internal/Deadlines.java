package dev.fenceguard.core.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Timeouts of calls in flight, with one timer task for all of them rather than one per call: the lock
 * client's bounds on backend calls and the Redis module's bounds on commands.
 *
 * <p>Why not {@code CompletableFuture.orTimeout} or a scheduled executor task per call: scheduling and
 * cancelling a task per call wakes the timer thread whenever the queue was empty, a context switch per
 * call; on a busy two-core machine that cost a quarter of Redis acquire+release throughput (first in
 * the Redis module, and again, with two such bounds per call, in the lock client above it). Here a call only
 * registers its deadline in a concurrent set (and removes it when answered); a sweep is scheduled for
 * the earliest deadline only when it is earlier than the one already armed, so a steady stream of calls
 * with equal timeouts schedules about one sweep per timeout period. A sweep fires the expired calls'
 * actions and re-arms for the earliest deadline left. Sweeps run on the scheduler's thread ({@link Timer}'s,
 * for the process's one instance {@link Timer#deadlines()}), one at a time; actions must not block.
 */
public final class Deadlines {

    /** One registered call: its deadline on {@link System#nanoTime()} and what to do when it passes. */
    public static final class Entry {
        final long deadline;
        final Runnable onExpiry;

        Entry(long deadline, Runnable onExpiry) {
            this.deadline = deadline;
            this.onExpiry = onExpiry;
        }
    }

    /** Runs a task after a delay; the timer thread in production, a hand-driven one in tests. */
    public interface Scheduler {
        void schedule(long delayNanos, Runnable task);
    }

    /** No sweep armed. Deadlines are nanoTime values, which may be negative: compare by difference, never with this. */
    private static final long NONE = Long.MIN_VALUE;

    private final Set<Entry> pending = ConcurrentHashMap.newKeySet();
    /** Deadline of the earliest sweep scheduled and not yet started, or {@link #NONE}. */
    private final AtomicLong armedAt = new AtomicLong(NONE);
    private final LongSupplier clock;
    private final Scheduler scheduler;

    /** On {@code clock} (nanoseconds, like {@link System#nanoTime()}), with sweeps run by {@code scheduler}. */
    public Deadlines(LongSupplier clock, Scheduler scheduler) {
        this.clock = clock;
        this.scheduler = scheduler;
    }

    /** Registers {@code onExpiry} to run once {@code deadline} has passed, unless removed first. */
    public Entry add(long deadline, Runnable onExpiry) {
        Entry e = new Entry(deadline, onExpiry);
        pending.add(e); // before reading armedAt: a sweep that resets it iterates after, and sees e
        arm(deadline);
        return e;
    }

    /** The call answered: forget it. */
    public void remove(Entry e) {
        pending.remove(e);
    }

    private void arm(long deadline) {
        for (long armed = armedAt.get(); armed == NONE || deadline - armed < 0; armed = armedAt.get()) {
            if (armedAt.compareAndSet(armed, deadline)) {
                scheduler.schedule(Math.max(0, deadline - clock.getAsLong()), () -> sweep(deadline));
                return;
            }
        }
    }

    private void sweep(long scheduledFor) {
        // Only the sweep that is still the armed one resets the mark; an earlier-armed one replaced it.
        armedAt.compareAndSet(scheduledFor, NONE);
        long now = clock.getAsLong();
        boolean more = false;
        long next = 0;
        for (Entry e : pending) {
            if (e.deadline - now <= 0) {
                if (pending.remove(e)) { // false if the call answered meanwhile
                    e.onExpiry.run();
                }
            } else if (!more || e.deadline - next < 0) {
                more = true;
                next = e.deadline;
            }
        }
        if (more) {
            arm(next);
        }
    }
}
