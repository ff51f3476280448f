package dev.fenceguard.core.micrometer;

import dev.fenceguard.core.singleflight.SingleflightMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@link SingleflightMetrics} on a Micrometer {@link MeterRegistry}, beside the lock meters of
 * {@link MicrometerLockMetrics}. Each meter is registered once per tag set and then reused. Tags are
 * bounded (the store's name, enum values); never a flight key.
 * <ul>
 *   <li>{@code fenceguard.singleflight.shared} (counter; {@code store}): callers that joined a flight
 *       already in progress in their process, with no round trip of their own;
 *   <li>{@code fenceguard.singleflight.led} (counter; {@code store}, {@code outcome} =
 *       published|superseded|failed): flights this process computed;
 *   <li>{@code fenceguard.singleflight.wait} (timer; {@code store}, {@code outcome} =
 *       result|took_over|gave_up): waits for another process's flight;
 *   <li>{@code fenceguard.singleflight.retained} (counter; {@code store}): flights answered by a retained
 *       result, without computing or waiting.
 * </ul>
 *
 * @since 0.1
 */
public final class MicrometerSingleflightMetrics implements SingleflightMetrics {

    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();

    private MicrometerSingleflightMetrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    /** Metrics on {@code registry}. */
    public static MicrometerSingleflightMetrics of(MeterRegistry registry) {
        return new MicrometerSingleflightMetrics(registry);
    }

    /** Metrics on Micrometer's {@link Metrics#globalRegistry}. */
    public static MicrometerSingleflightMetrics global() {
        return of(Metrics.globalRegistry);
    }

    @Override
    public void shared(String store) {
        counter("fenceguard.singleflight.shared", store, null).increment();
    }

    @Override
    public void led(String store, LedOutcome outcome) {
        counter("fenceguard.singleflight.led", store, tag(outcome)).increment();
    }

    @Override
    public void waited(String store, WaitOutcome outcome, Duration waited) {
        timers.computeIfAbsent(store + '\0' + outcome, k -> Timer.builder("fenceguard.singleflight.wait")
                .description("waits for another process's flight")
                .tags("store", store, "outcome", tag(outcome)).register(registry)).record(waited);
    }

    @Override
    public void retained(String store) {
        counter("fenceguard.singleflight.retained", store, null).increment();
    }

    private Counter counter(String name, String store, String outcome) {
        return counters.computeIfAbsent(name + '\0' + store + '\0' + outcome, k -> {
            Counter.Builder b = Counter.builder(name).tag("store", store);
            return (outcome == null ? b : b.tag("outcome", outcome)).register(registry);
        });
    }

    private static String tag(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }
}
