package dev.fenceguard.core.internal;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.spi.WriteRule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * The settings that every backend module's entry builder ({@code FenceGuardRedis},
 * {@code FenceGuardFirestore}) takes the same way, held once so that the builders only delegate: the
 * call timeout of one store call, where stale rejections are counted, and where writes are observed.
 * Mutable, like the builder that holds it; the entry reads it once, in its constructor.
 */
public final class EntrySettings {

    /** Shortest and longest call timeout accepted, as for {@code LockClient}'s. */
    private static final Duration SHORTEST = Duration.ofMillis(1);
    private static final Duration LONGEST = Duration.ofMinutes(10);

    private Duration callTimeout = Duration.ofSeconds(10);
    /** Null until set: the default, {@link LockMetrics#automatic()}, is looked up when the entry is built. */
    private LockMetrics metrics;
    private LockObservations observations = LockObservations.none();

    /** @throws IllegalArgumentException if not between 1 ms and 10 minutes */
    public void callTimeout(Duration timeout) {
        this.callTimeout = timeout("callTimeout", timeout);
    }

    public void metrics(LockMetrics metrics) {
        this.metrics = Objects.requireNonNull(metrics, "metrics");
    }

    public void observations(LockObservations observations) {
        this.observations = Objects.requireNonNull(observations, "observations");
    }

    public Duration callTimeout() {
        return callTimeout;
    }

    /**
     * One fenced writer per {@link FencePolicy}, each made by {@code make} from its write rule; the rules
     * share these metrics and observations.
     */
    public <T> Map<FencePolicy, T> perPolicy(FenceEncoding encoding, String backend, Function<WriteRule, T> make) {
        LockMetrics m = metrics != null ? metrics : LockMetrics.automatic();
        Map<FencePolicy, T> out = new EnumMap<>(FencePolicy.class);
        for (FencePolicy policy : FencePolicy.values()) {
            out.put(policy, make.apply(new WriteRule(policy, encoding, m, backend, observations)));
        }
        return Collections.unmodifiableMap(out);
    }

    /**
     * The timeout rule of every builder: a {@code name} setting between 1 ms and 10 minutes.
     *
     * @throws IllegalArgumentException naming the setting, the limits and the value
     */
    public static Duration timeout(String name, Duration timeout) {
        Objects.requireNonNull(timeout, name);
        if (timeout.compareTo(SHORTEST) < 0 || timeout.compareTo(LONGEST) > 0) {
            throw new IllegalArgumentException(name + " must be between 1 ms and 10 minutes, was " + timeout);
        }
        return timeout;
    }

    /** {@code items}, each passed through {@code check}, as an immutable list (for varargs settings). */
    public static List<String> each(String setting, String[] items, UnaryOperator<String> check) {
        Objects.requireNonNull(items, setting);
        List<String> out = new ArrayList<>(items.length);
        for (String item : items) {
            out.add(check.apply(item));
        }
        return List.copyOf(out);
    }
}
