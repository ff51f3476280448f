package dev.fenceguard.core;

import dev.fenceguard.core.internal.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;

/**
 * The one seam between fence-guard and time: wall-clock instants (for expiry instants a backend
 * without its own clock computes), a monotonic nanosecond counter (for local lease deadlines, which
 * must never be fooled by wall-clock jumps), sleeping, and timers (for backoff, renewal and call
 * deadlines, which never hold a thread while they wait).
 *
 * <p>{@link #system()} is the real thing; fence-guard-testkit's {@code ManualTimeSource} lets tests move time by hand.
 * Implementations must be thread-safe.
 *
 * @since 0.1
 */
public interface TimeSource {

    /** Wall-clock now. */
    Instant now();

    /** A monotonic counter in nanoseconds, like {@link System#nanoTime()}; only differences matter. */
    long nanoTime();

    /**
     * Blocks for {@code duration} of this source's time.
     *
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    void sleep(Duration duration) throws InterruptedException;

    /**
     * Runs {@code task} once, {@code delay} of this source's time from now. Tasks must be short and must
     * not block: fence-guard uses them to send the next request, never to wait for one. The default
     * waits on a virtual thread with {@link #sleep}; {@link #system()} uses one shared timer thread.
     *
     * @return a handle; cancelling it before the task runs means the task never runs
     */
    default Future<?> schedule(Duration delay, Runnable task) {
        FutureTask<Void> run = new FutureTask<>(task, null);
        Thread.ofVirtual().name("fence-guard-timer").start(() -> {
            try {
                sleep(delay);
                run.run();
            } catch (InterruptedException e) {
                run.cancel(false);
            }
        });
        return run;
    }

    /** The system clocks: {@link Instant#now()}, {@link System#nanoTime()}, {@link Thread#sleep(Duration)}. */
    static TimeSource system() {
        return SystemTimeSource.INSTANCE;
    }
}

enum SystemTimeSource implements TimeSource {
    INSTANCE;

    @Override
    public Instant now() {
        return Instant.now();
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public void sleep(Duration duration) throws InterruptedException {
        if (duration.isPositive()) {
            Thread.sleep(duration);
        }
    }

    /** On the process's one {@code fence-guard-timer} thread, shared with every module's deadlines. */
    @Override
    public Future<?> schedule(Duration delay, Runnable task) {
        return Timer.schedule(delay, task);
    }
}
