package dev.fenceguard.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * A {@link TimeSource} that moves only when told to, for deterministic tests of expiry, renewal and
 * lease loss. Threads that {@link #sleep(Duration)} wake when {@link #advance(Duration)} has moved
 * the clock past their wake-up time. Thread-safe.
 *
 * <pre>{@code
 * ManualTimeSource time = new ManualTimeSource(Instant.parse("2026-01-01T00:00:00Z"));
 * InMemoryLockBackend backend = new InMemoryLockBackend(time);
 * LockClient client = LockClient.builder(backend).withTimeSource(time).build();
 * time.advance(Duration.ofSeconds(31));   // every 30 s lease is now expired
 * }</pre>
 */
public final class ManualTimeSource implements TimeSource {

    private final Instant start;
    private long elapsedNanos;
    private int sleepers;

    /** A clock that reads {@code start} until advanced. */
    public ManualTimeSource(Instant start) {
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
    public synchronized void advance(Duration by) {
        if (by.isNegative()) {
            throw new IllegalArgumentException("time only moves forward, was asked to advance by " + by);
        }
        elapsedNanos += by.toNanos();
        notifyAll();
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
