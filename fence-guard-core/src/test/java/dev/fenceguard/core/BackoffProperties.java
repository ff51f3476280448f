package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.internal.Backoff;
import java.time.Duration;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

class BackoffProperties {

    @Property
    void delayStaysWithinZeroAndTheCappedExponential(@ForAll @LongRange(min = 1, max = 1000) long initialMs,
            @ForAll @LongRange(min = 0, max = 100_000) long extraMs, @ForAll @IntRange(min = 0, max = 200) int attempt,
            @ForAll @DoubleRange(min = 0, max = 1, maxIncluded = false) double u) {
        Backoff backoff = new Backoff(Duration.ofMillis(initialMs), Duration.ofMillis(initialMs + extraMs));
        Duration delay = backoff.delay(attempt, u);
        double exponential = initialMs * Math.pow(2, attempt);
        long ceilingMs = (long) Math.min(initialMs + extraMs, exponential);
        assertThat(delay).isGreaterThanOrEqualTo(Duration.ZERO).isLessThanOrEqualTo(Duration.ofMillis(ceilingMs));
        assertThat(backoff.ceilingNanos(attempt)).isEqualTo(Duration.ofMillis(ceilingMs).toNanos());
    }

    @Property
    void ceilingNeverShrinksAsAttemptsGrow(@ForAll @IntRange(min = 0, max = 100) int attempt) {
        Backoff backoff = new Backoff(Duration.ofMillis(10), Duration.ofSeconds(1));
        assertThat(backoff.ceilingNanos(attempt + 1)).isGreaterThanOrEqualTo(backoff.ceilingNanos(attempt));
    }

    @Example
    void fullJitterSpansTheWholeRange() {
        Backoff backoff = new Backoff(Duration.ofMillis(10), Duration.ofSeconds(1));
        assertThat(backoff.delay(3, 0.0)).isEqualTo(Duration.ZERO);
        assertThat(backoff.delay(3, 0.5)).isEqualTo(Duration.ofMillis(40));
        assertThat(backoff.delay(30, 0.5)).isEqualTo(Duration.ofMillis(500));
    }

    @Example
    void badSettingsAreRejected() {
        assertThatThrownBy(() -> new Backoff(Duration.ZERO, Duration.ofSeconds(1)))
                .hasMessage("backoff initial delay must be positive, was PT0S");
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .hasMessage("backoff max delay must be at least the initial delay PT2S, was PT1S");
        assertThatThrownBy(() -> new Backoff(Duration.ofMillis(1), Duration.ofMillis(1)).delay(0, 1.0))
                .hasMessage("u must be in [0, 1), was 1.0");
    }
}
