package dev.fenceguard.core.internal;

/**
 * The arithmetic of {@link dev.fenceguard.core.FenceStrategy#CLOCK_FLOORED}: the floor is the backend's
 * clock in 10 µs ticks since 2025-01-01. The backends write it into their acquire statements and scripts;
 * the constants are part of the stored format (fences already issued were floored by them), so they never
 * change.
 */
public final class ClockFloor {

    /** 2025-01-01T00:00:00Z in Unix milliseconds: the custom epoch of the clock floor. */
    public static final long EPOCH_MILLIS = 1_735_689_600_000L;

    /** Fences per millisecond in the clock floor. */
    public static final long PER_MILLISECOND = 100;

    /** Microseconds per step of the clock floor (one fence per tick of this length). */
    public static final long MICROS_PER_FENCE = 1000 / PER_MILLISECOND;

    private ClockFloor() {}

    /** The clock floor for a backend clock reading {@code unixMillis}, at a millisecond boundary. */
    public static long floorAt(long unixMillis) {
        return Math.max(0, unixMillis - EPOCH_MILLIS) * PER_MILLISECOND;
    }

    /** The clock floor for a backend clock reading {@code unixMicros}: 10 µs ticks since the epoch. */
    public static long floorAtMicros(long unixMicros) {
        return Math.max(0, unixMicros - EPOCH_MILLIS * 1000) / MICROS_PER_FENCE;
    }
}
