package dev.fenceguard.core.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * The horizon settings of a fenced resource (docs/fence-lifecycle.md): a write that would create the fence
 * record of an absent key needs a fence above {@code tick(now - age)}; a purge removes tombstones below
 * {@code tick(now - age - margin)}. One owner for the settings' limits, so every store's builder refuses
 * the same values with the same words.
 *
 * @param age the horizon age {@code H}
 * @param margin the clock margin {@code M}
 */
public record Horizon(Duration age, Duration margin) {

    /** The clock margin when none is set. */
    public static final Duration DEFAULT_MARGIN = Duration.ofMinutes(5);

    private static final Duration MIN_AGE = Duration.ofSeconds(1);
    private static final Duration MAX_AGE = Duration.ofDays(3650);
    private static final Duration MAX_MARGIN = Duration.ofDays(1);

    public Horizon {
        checkAge(age);
        checkMargin(margin);
    }

    /**
     * {@code age}, if it is a horizon age a builder accepts.
     *
     * @throws NullPointerException if {@code age} is null (message {@code "horizon"})
     * @throws IllegalArgumentException if it is shorter than 1 second or longer than 3650 days
     */
    public static Duration checkAge(Duration age) {
        Objects.requireNonNull(age, "horizon");
        if (age.compareTo(MIN_AGE) < 0 || age.compareTo(MAX_AGE) > 0) {
            throw new IllegalArgumentException("horizon must be between 1 s and 3650 days, was " + age);
        }
        return age;
    }

    /**
     * {@code margin}, if it is a clock margin a builder accepts.
     *
     * @throws NullPointerException if {@code margin} is null (message {@code "clockMargin"})
     * @throws IllegalArgumentException if it is negative or longer than 1 day
     */
    public static Duration checkMargin(Duration margin) {
        Objects.requireNonNull(margin, "clockMargin");
        if (margin.isNegative() || margin.compareTo(MAX_MARGIN) > 0) {
            throw new IllegalArgumentException("clockMargin must be between 0 and 1 day, was " + margin);
        }
        return margin;
    }

    /** {@code H} in microseconds. */
    public long ageMicros() {
        return micros(age);
    }

    /** {@code H + M} in microseconds: how far behind the clock a purge's horizon is. */
    public long purgeMicros() {
        return Math.addExact(micros(age), micros(margin));
    }

    private static long micros(Duration d) {
        return Math.addExact(Math.multiplyExact(d.getSeconds(), 1_000_000L), d.getNano() / 1_000);
    }
}
