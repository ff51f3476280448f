package dev.fenceguard.core;

import java.time.Duration;
import java.time.Instant;

/**
 * The one seam between fence-guard and time: wall-clock instants (for expiry instants a backend
 * without its own clock computes), a monotonic nanosecond counter (for local lease deadlines, which
 * must never be fooled by wall-clock jumps) and sleeping (for backoff and renewal).
 *
 * <p>{@link #system()} is the real thing; {@link ManualTimeSource} lets tests move time by hand.
 * Implementations must be thread-safe.
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
}
