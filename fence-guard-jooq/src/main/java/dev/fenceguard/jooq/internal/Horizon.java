package dev.fenceguard.jooq.internal;

import java.time.Duration;

/**
 * The horizon settings of a fenced table (docs/fence-lifecycle.md): a write that would create the fence
 * record of an absent key needs a fence above {@code tick(now - age)}; a purge removes tombstones below
 * {@code tick(now - age - margin)}.
 *
 * @param age the horizon age {@code H}
 * @param margin the clock margin {@code M}
 */
public record Horizon(Duration age, Duration margin) {

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
