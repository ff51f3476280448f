package dev.fenceguard.core.micrometer;

import dev.fenceguard.core.LockMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link LockMetrics} on a Micrometer {@link MeterRegistry}. Loaded only when used, so fence-guard-core
 * runs without Micrometer. Each meter is registered once per tag set and then reused: recording is a
 * map lookup and an increment, never a registry lookup.
 *
 * <p>Meters (tag values are bounded: backend and resource-type names, enum values; never a lock key):
 * <ul>
 *   <li>{@code fenceguard.lock.acquire} (timer; {@code backend}, {@code outcome}): one backend attempt;
 *   <li>{@code fenceguard.lock.acquire.wait} (timer; {@code backend}, {@code outcome} = acquired|gave_up):
 *       the whole wait of an {@code acquire}, backoff included; its count with {@code gave_up} is the
 *       number of acquires given up at their deadline;
 *   <li>{@code fenceguard.lock.held} (timer; {@code backend}): how long leases were held;
 *   <li>{@code fenceguard.lock.held.now} (gauge; {@code backend}): leases this process holds now
 *       (granted, not yet released or lost);
 *   <li>{@code fenceguard.lock.lost} (counter; {@code backend}, {@code cause} = taken_over|unreachable|expired):
 *       leases lost while held;
 *   <li>{@code fenceguard.lock.renew.failures} (counter; {@code backend});
 *   <li>{@code fenceguard.fence.high} (counter; {@code backend});
 *   <li>{@code fenceguard.write.stale} (counter; {@code resource}).
 * </ul>
 */
public final class MicrometerLockMetrics implements LockMetrics {

    private final MeterRegistry registry;
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> heldNow = new ConcurrentHashMap<>();

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
        String o = lower(outcome);
        timers.computeIfAbsent("acquire|" + backend + "|" + o, k -> Timer.builder("fenceguard.lock.acquire")
                .description("One lock acquire attempt, by outcome").tag("backend", backend).tag("outcome", o)
                .register(registry)).record(latency);
    }

    @Override
    public void acquireWaited(String backend, Duration waited, boolean acquired) {
        String o = acquired ? "acquired" : "gave_up";
        timers.computeIfAbsent("wait|" + backend + "|" + o, k -> Timer.builder("fenceguard.lock.acquire.wait")
                .description("Time spent in acquire, backoff included, by how it ended").tag("backend", backend)
                .tag("outcome", o).register(registry)).record(waited);
    }

    @Override
    public void held(String backend, Duration holdTime) {
        timers.computeIfAbsent("held|" + backend, k -> Timer.builder("fenceguard.lock.held")
                .description("How long leases were held").tag("backend", backend).register(registry)).record(holdTime);
    }

    @Override
    public void leaseStarted(String backend) {
        held(backend).incrementAndGet();
    }

    @Override
    public void leaseEnded(String backend) {
        held(backend).decrementAndGet();
    }

    private AtomicLong held(String backend) {
        return heldNow.computeIfAbsent(backend, b -> {
            AtomicLong n = new AtomicLong();
            Gauge.builder("fenceguard.lock.held.now", n, AtomicLong::get).description("Leases this process holds now")
                    .tag("backend", b).register(registry);
            return n;
        });
    }

    @Override
    public void leaseLost(String backend, LossCause cause) {
        String c = lower(cause);
        counter("lost|" + backend + "|" + c, () -> Counter.builder("fenceguard.lock.lost")
                .description("Leases lost while held, by cause").tag("backend", backend).tag("cause", c)).increment();
    }

    @Override
    public void renewFailed(String backend) {
        counter("renew|" + backend, () -> Counter.builder("fenceguard.lock.renew.failures").tag("backend", backend)).increment();
    }

    @Override
    public void highFence(String backend) {
        counter("high|" + backend, () -> Counter.builder("fenceguard.fence.high")
                .description("Fences issued above the warning threshold").tag("backend", backend)).increment();
    }

    @Override
    public void staleWriteRejected(String resourceType) {
        counter("stale|" + resourceType, () -> Counter.builder("fenceguard.write.stale")
                .description("Fenced writes rejected as stale").tag("resource", resourceType)).increment();
    }

    private Counter counter(String id, java.util.function.Supplier<Counter.Builder> builder) {
        return counters.computeIfAbsent(id, k -> builder.get().register(registry));
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(java.util.Locale.ROOT);
    }
}
