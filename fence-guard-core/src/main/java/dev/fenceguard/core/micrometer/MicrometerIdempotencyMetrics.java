package dev.fenceguard.core.micrometer;

import dev.fenceguard.core.idempotency.IdempotencyMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@link IdempotencyMetrics} on a Micrometer {@link MeterRegistry}: the counter
 * {@code fenceguard.idempotency} (tags {@code backend}, {@code answer} = hit|conflict|in_progress), idempotent
 * calls answered without running the work. Each counter is registered once per tag set and then reused.
 * Never tagged with an idempotency key: keys are unbounded.
 *
 * @since 0.1
 */
public final class MicrometerIdempotencyMetrics implements IdempotencyMetrics {

    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    private MicrometerIdempotencyMetrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    /**
     * Metrics on {@code registry}.
     *
     * @throws NullPointerException if {@code registry} is null
     */
    public static MicrometerIdempotencyMetrics of(MeterRegistry registry) {
        return new MicrometerIdempotencyMetrics(registry);
    }

    /** Metrics on Micrometer's {@link Metrics#globalRegistry}. */
    public static MicrometerIdempotencyMetrics global() {
        return of(Metrics.globalRegistry);
    }

    @Override
    public void answered(String backend, Answer answer) {
        String a = answer.name().toLowerCase(Locale.ROOT);
        counters.computeIfAbsent(backend + '\0' + a, k -> Counter.builder("fenceguard.idempotency")
                .description("Idempotent calls answered without running the work").tag("backend", backend).tag("answer", a)
                .register(registry)).increment();
    }
}
