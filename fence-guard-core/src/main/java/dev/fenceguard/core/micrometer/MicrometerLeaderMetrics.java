package dev.fenceguard.core.micrometer;

import dev.fenceguard.core.leader.LeaderMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link LeaderMetrics} on a Micrometer {@link MeterRegistry}. Meters, tagged {@code leadership} (the
 * leadership's name: a lock key chosen in code, so bounded):
 * <ul>
 *   <li>{@code fenceguard.leader.elections} (counter): terms won by this process;
 *   <li>{@code fenceguard.leader.term} (gauge): the term this process leads in now, 0 when it does not lead;
 *   <li>{@code fenceguard.leader.renew.failures} (counter): terms taken from this process because renewal was
 *       refused, unconfirmed or too late (resignations and stops not counted).
 * </ul>
 *
 * @since 0.1
 */
public final class MicrometerLeaderMetrics implements LeaderMetrics {

    /**
     * Term gauges per registry, shared by every instance on it: a registry keeps the first gauge of a name
     * and tags, so a second instance's own value would never be read.
     */
    private static final Map<MeterRegistry, Map<String, AtomicLong>> TERMS = Collections.synchronizedMap(new WeakHashMap<>());

    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    private MicrometerLeaderMetrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    /**
     * Metrics on {@code registry}.
     *
     * @throws NullPointerException if {@code registry} is null
     */
    public static MicrometerLeaderMetrics of(MeterRegistry registry) {
        return new MicrometerLeaderMetrics(registry);
    }

    /** Metrics on Micrometer's {@link Metrics#globalRegistry}. */
    public static MicrometerLeaderMetrics global() {
        return of(Metrics.globalRegistry);
    }

    @Override
    public void elected(String leadership, long term) {
        counters.computeIfAbsent("elected\0" + leadership, k -> Counter.builder("fenceguard.leader.elections")
                .description("Terms won by this process").tag("leadership", leadership).register(registry)).increment();
        term(leadership).set(term);
    }

    @Override
    public void termEnded(String leadership, boolean lost) {
        term(leadership).set(0);
        if (lost) {
            counters.computeIfAbsent("lost\0" + leadership, k -> Counter.builder("fenceguard.leader.renew.failures")
                    .description("Terms taken from this process: renewal refused, unconfirmed or too late")
                    .tag("leadership", leadership).register(registry)).increment();
        }
    }

    private AtomicLong term(String leadership) {
        return TERMS.computeIfAbsent(registry, r -> new ConcurrentHashMap<>()).computeIfAbsent(leadership, l -> {
            AtomicLong n = new AtomicLong();
            Gauge.builder("fenceguard.leader.term", n, AtomicLong::get).description("The term this process leads in now; 0 when not leading")
                    .tag("leadership", l).register(registry);
            return n;
        });
    }
}
