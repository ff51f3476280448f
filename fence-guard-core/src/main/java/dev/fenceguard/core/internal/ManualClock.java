package dev.fenceguard.core.internal;

import dev.fenceguard.core.TimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;

/**
 * A {@link TimeSource} that moves only when told to, for deterministic tests of expiry, renewal and
 * lease loss. Threads that {@link #sleep(Duration)} wake when {@link #advance(Duration)} has moved
 * the clock past their wake-up time, and {@link #schedule scheduled} tasks whose time has come run
 * on the thread that calls {@code advance}, in the order of their due times, before it returns. So
 * a test that advances the clock sees every renewal, backoff retry and deadline of that stretch
 * already done. Thread-safe.
 *
 * <p><b>Why it lives here.</b> Users get it as {@code dev.fenceguard.testkit.ManualTimeSource}, a thin
 * public face over this class: test helpers belong to fence-guard-testkit (docs/api.md). Core's own
 * tests need the same clock but cannot depend on the testkit (it depends on core: a Maven cycle), and a
 * copy in core's test sources would be a second implementation to keep in step. So the one
 * implementation is here, in a package exported only to the testkit, and core's tests use it directly.
 */
public final class ManualClock implements TimeSource {

    private final Instant start;
    private long elapsedNanos;
    private int sleepers;
    private long sequence;
    private final PriorityQueue<Task> tasks = new PriorityQueue<>();

    private record Task(long dueNanos, long order, FutureTask<Void> run) implements Comparable<Task> {
        @Override
        public int compareTo(Task o) {
            int byTime = Long.compare(dueNanos, o.dueNanos);
            return byTime != 0 ? byTime : Long.compare(order, o.order);
        }
    }

    /** A clock that reads {@code start} until advanced. */
    public ManualClock(Instant start) {
        this.start = Objects.requireNonNull(start, "start");
    }

    @Override
    public synchronized Instant now() {
        return start.plusNanos(elapsedNanos);
    }

    @Override
    public synchronized long nanoTime() {
        return elapsedNanos;
    }

    @Override
    public synchronized void sleep(Duration duration) throws InterruptedException {
        long wakeAt = elapsedNanos + duration.toNanos();
        sleepers++;
        notifyAll();
        try {
            while (elapsedNanos < wakeAt) {
                wait();
            }
        } finally {
            sleepers--;
            notifyAll();
        }
    }

    /**
     * Moves time forward and wakes the sleepers whose time has come.
     *
     * @throws IllegalArgumentException if {@code by} is negative
     */
    public void advance(Duration by) {
        if (by.isNegative()) {
            throw new IllegalArgumentException("time only moves forward, was asked to advance by " + by);
        }
        long target;
        synchronized (this) {
            target = elapsedNanos + by.toNanos();
        }
        // Step through the due tasks one by one, so a task that schedules another within this stretch
        // (a renewal scheduling the next one) sees it run too, at its own time.
        while (true) {
            Task next;
            synchronized (this) {
                next = tasks.peek();
                if (next == null || next.dueNanos() > target) {
                    elapsedNanos = Math.max(elapsedNanos, target);
                    notifyAll();
                    return;
                }
                tasks.poll();
                elapsedNanos = Math.max(elapsedNanos, next.dueNanos());
                notifyAll();
            }
            next.run().run(); // outside the lock: tasks call back into this clock
        }
    }

    @Override
    public Future<?> schedule(Duration delay, Runnable task) {
        FutureTask<Void> run = new FutureTask<>(task, null);
        synchronized (this) {
            tasks.add(new Task(elapsedNanos + Math.max(0, delay.toNanos()), sequence++, run));
        }
        return run;
    }

    /** How many scheduled tasks are waiting to run (cancelled ones included until their time). */
    public synchronized int pendingTasks() {
        return (int) tasks.stream().filter(t -> !t.run().isDone()).count();
    }

    /**
     * Waits (in real time, at most {@code timeout}) until at least {@code count} threads are asleep
     * on this clock; lets a test step in lockstep with a background renewer.
     *
     * @return whether that many sleepers were seen before the timeout
     * @throws InterruptedException if interrupted while waiting
     */
    public synchronized boolean awaitSleepers(int count, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (sleepers < count) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return true;
    }
}
