package dev.fenceguard.core.micrometer;

import dev.fenceguard.core.LockMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Objects;

/**
 * {@link LockMetrics} on a Micrometer {@link MeterRegistry}. Loaded only when used, so fence-guard-core
 * runs without Micrometer.
 *
 * <p>Meters: {@code fenceguard.lock.acquire} (timer; tags {@code backend}, {@code outcome}),
 * {@code fenceguard.lock.held} (timer; {@code backend}), {@code fenceguard.lock.renew.failures}
 * (counter; {@code backend}), {@code fenceguard.fence.high} (counter; {@code backend}),
 * {@code fenceguard.write.stale} (counter; {@code resource}).
 */
public final class MicrometerLockMetrics implements LockMetrics {

    private final MeterRegistry registry;

    private MicrometerLockMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Metrics on {@code registry}. */
    public static MicrometerLockMetrics of(MeterRegistry registry) {
        return new MicrometerLockMetrics(Objects.requireNonNull(registry, "registry"));
    }

    /** Metrics on Micrometer's {@link Metrics#globalRegistry}. */
    public static MicrometerLockMetrics global() {
        return new MicrometerLockMetrics(Metrics.globalRegistry);
    }

    @Override
    public void acquireAttempt(String backend, AcquireOutcome outcome, Duration latency) {
        Timer.builder("fenceguard.lock.acquire")
                .description("One lock acquire attempt, by outcome")
                .tag("backend", backend)
                .tag("outcome", outcome.name().toLowerCase(java.util.Locale.ROOT))
                .register(registry)
                .record(latency);
    }

    @Override
    public void held(String backend, Duration holdTime) {
        Timer.builder("fenceguard.lock.held").description("How long leases were held")
                .tag("backend", backend).register(registry).record(holdTime);
    }

    @Override
    public void renewFailed(String backend) {
        Counter.builder("fenceguard.lock.renew.failures").tag("backend", backend).register(registry).increment();
    }

    @Override
    public void highFence(String backend) {
        Counter.builder("fenceguard.fence.high").description("Fences issued above the warning threshold")
                .tag("backend", backend).register(registry).increment();
    }

    @Override
    public void staleWriteRejected(String resourceType) {
        Counter.builder("fenceguard.write.stale").description("Fenced writes rejected as stale")
                .tag("resource", resourceType).register(registry).increment();
    }
}
