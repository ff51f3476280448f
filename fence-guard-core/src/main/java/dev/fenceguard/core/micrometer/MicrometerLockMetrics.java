package dev.fenceguard.core.micrometer;

import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LossCause;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 *   <li>{@code fenceguard.write.stale} (counter; {@code resource});
 *   <li>{@code fenceguard.purge.removed} (counter; {@code store}, {@code kind} = tombstone|lock): fence
 *       records a purge removed.
 * </ul>
 *
 * <p>The meters of the other components come from {@link MicrometerIdempotencyMetrics},
 * {@link MicrometerLeaderMetrics} and {@link MicrometerSingleflightMetrics}.
 *
 * <p><b>Lock names (opt-in).</b> {@link Builder#withLockNames} adds a {@code lock.name} tag to every
 * meter above but {@code fenceguard.write.stale}: a name your function derives from the key (say the
 * part before the first {@code ':'}, see {@link #prefixUpTo}), at most {@code maxNames} distinct names
 * per instance, after which further names are counted under {@value #OTHER_LOCKS}. Keys themselves
 * are never tags: they are unbounded. Give every client on one registry the same setting, since
 * registries such as Prometheus's want one set of tag keys per meter name.
 *
 * @since 0.1
 */
public final class MicrometerLockMetrics implements LockMetrics {

    /**
     * The {@code lock.name} of locks past the bound, or whose name function failed or gave null or "".
     *
     * @since 0.1
     */
    public static final String OTHER_LOCKS = "other";

    private static final Logger log = LoggerFactory.getLogger(MicrometerLockMetrics.class);

    private final MeterRegistry registry;
    private final Naming naming;
    /** This view's {@code lock.name}, or null for meters without the tag. */
    private final String lockName;
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> heldNow = new ConcurrentHashMap<>();

    private MicrometerLockMetrics(MeterRegistry registry, Naming naming, String lockName) {
        this.registry = registry;
        this.naming = naming;
        this.lockName = lockName;
    }

    /** Metrics on {@code registry}, without lock names. */
    public static MicrometerLockMetrics of(MeterRegistry registry) {
        return builder(registry).build();
    }

    /** Metrics on Micrometer's {@link Metrics#globalRegistry}, without lock names. */
    public static MicrometerLockMetrics global() {
        return of(Metrics.globalRegistry);
    }

    /**
     * A builder for metrics on {@code registry}.
     *
     * @throws NullPointerException if {@code registry} is null
     * @since 0.1
     */
    public static Builder builder(MeterRegistry registry) {
        return new Builder(registry);
    }

    /**
     * A lock-name function for {@link Builder#withLockNames}: the key up to, not including, the first
     * {@code separator} ({@code "orders:42"} gives {@code "orders"}), or the whole key if it has none.
     *
     * @since 0.1
     */
    public static Function<String, String> prefixUpTo(char separator) {
        return key -> {
            int at = key.indexOf(separator);
            return at < 0 ? key : key.substring(0, at);
        };
    }

    /**
     * This object if lock names are off; otherwise the view whose meters carry the key's
     * {@code lock.name}. Views are made once per name and kept.
     *
     * @since 0.1
     */
    @Override
    public LockMetrics forLock(LockKey key) {
        if (naming == null || lockName != null) {
            return this;
        }
        return naming.view(key.value(), this);
    }

    @Override
    public void acquireAttempt(String backend, AcquireOutcome outcome, Duration latency) {
        String o = lower(outcome);
        timers.computeIfAbsent("acquire|" + backend + "|" + o, k -> Timer.builder("fenceguard.lock.acquire")
                .description("One lock acquire attempt, by outcome").tags(tags(backend)).tag("outcome", o)
                .register(registry)).record(latency);
    }

    @Override
    public void acquireWaited(String backend, Duration waited, boolean acquired) {
        String o = acquired ? "acquired" : "gave_up";
        timers.computeIfAbsent("wait|" + backend + "|" + o, k -> Timer.builder("fenceguard.lock.acquire.wait")
                .description("Time spent in acquire, backoff included, by how it ended").tags(tags(backend))
                .tag("outcome", o).register(registry)).record(waited);
    }

    @Override
    public void held(String backend, Duration holdTime) {
        timers.computeIfAbsent("held|" + backend, k -> Timer.builder("fenceguard.lock.held")
                .description("How long leases were held").tags(tags(backend)).register(registry)).record(holdTime);
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
                    .tags(tags(b)).register(registry);
            return n;
        });
    }

    @Override
    public void leaseLost(String backend, LossCause cause) {
        String c = lower(cause);
        counter("lost|" + backend + "|" + c, () -> Counter.builder("fenceguard.lock.lost")
                .description("Leases lost while held, by cause").tags(tags(backend)).tag("cause", c)).increment();
    }

    @Override
    public void renewFailed(String backend) {
        counter("renew|" + backend, () -> Counter.builder("fenceguard.lock.renew.failures").tags(tags(backend))).increment();
    }

    @Override
    public void highFence(String backend) {
        counter("high|" + backend, () -> Counter.builder("fenceguard.fence.high")
                .description("Fences issued above the warning threshold").tags(tags(backend))).increment();
    }

    @Override
    public void staleWriteRejected(String resourceType) {
        // Writes do not know the lock that guards them, so this meter never carries lock.name.
        counter("stale|" + resourceType, () -> Counter.builder("fenceguard.write.stale")
                .description("Fenced writes rejected as stale").tag("resource", resourceType)).increment();
    }

    @Override
    public void purged(String store, String kind, long removed) {
        // Like stale writes, a purge concerns a table, not a lock: no lock.name.
        counter("purged|" + store + "|" + kind, () -> Counter.builder("fenceguard.purge.removed")
                .description("Fence records removed by purges").tag("store", store).tag("kind", kind)).increment(removed);
    }

    private Tags tags(String backend) {
        return lockName == null ? Tags.of("backend", backend) : Tags.of("backend", backend, "lock.name", lockName);
    }

    private Counter counter(String id, Supplier<Counter.Builder> builder) {
        return counters.computeIfAbsent(id, k -> builder.get().register(registry));
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }

    /** The lock-name function, its bound, and the views made so far (shared by the views). */
    private static final class Naming {
        final Function<String, String> function;
        final int maxNames;
        final Map<String, MicrometerLockMetrics> views = new ConcurrentHashMap<>();
        final AtomicBoolean warned = new AtomicBoolean();

        Naming(Function<String, String> function, int maxNames) {
            this.function = function;
            this.maxNames = maxNames;
        }

        MicrometerLockMetrics view(String key, MicrometerLockMetrics base) {
            String name = nameOf(key);
            MicrometerLockMetrics view = views.get(name);
            return view != null ? view : add(name, base);
        }

        /** Slow path, once per name: under a lock so that the bound is exact. */
        private synchronized MicrometerLockMetrics add(String name, MicrometerLockMetrics base) {
            MicrometerLockMetrics view = views.get(name);
            if (view != null) {
                return view;
            }
            long named = views.size() - (views.containsKey(OTHER_LOCKS) ? 1 : 0);
            String tag = named < maxNames || name.equals(OTHER_LOCKS) ? name : OTHER_LOCKS;
            return views.computeIfAbsent(tag, t -> new MicrometerLockMetrics(base.registry, this, t));
        }

        private String nameOf(String key) {
            String name;
            try {
                name = function.apply(key);
            } catch (RuntimeException e) {
                // Metrics must never fail a lock operation: count the event, and say so once.
                if (warned.compareAndSet(false, true)) {
                    log.warn("the lock-name function threw {}; such locks are tagged lock.name={}", e.getClass().getName(), OTHER_LOCKS);
                }
                return OTHER_LOCKS;
            }
            return name == null || name.isEmpty() ? OTHER_LOCKS : name;
        }
    }

    /**
     * Options for {@link MicrometerLockMetrics}. Not thread-safe; {@link #build()} copies the settings.
     *
     * @since 0.1
     */
    public static final class Builder {
        /** The most distinct lock names one instance accepts. */
        public static final int MAX_LOCK_NAMES = 10_000;

        private final MeterRegistry registry;
        private Function<String, String> naming;
        private int maxNames;

        private Builder(MeterRegistry registry) {
            this.registry = Objects.requireNonNull(registry, "registry");
        }

        /**
         * Tags lock meters with {@code lock.name} = {@code naming.apply(key)}, for at most
         * {@code maxNames} distinct names; the events of further names, and of keys for which the
         * function throws or gives null or "", are tagged {@value MicrometerLockMetrics#OTHER_LOCKS}. Off by default. The
         * function gets the (NFC-normalised) key and must be fast: it runs on every lock event.
         *
         * @throws NullPointerException if {@code naming} is null
         * @throws IllegalArgumentException if {@code maxNames} is not between 1 and {@value #MAX_LOCK_NAMES}
         */
        public Builder withLockNames(Function<String, String> naming, int maxNames) {
            Objects.requireNonNull(naming, "naming");
            if (maxNames < 1 || maxNames > MAX_LOCK_NAMES) {
                throw new IllegalArgumentException("maxNames must be between 1 and " + MAX_LOCK_NAMES + ", was " + maxNames);
            }
            this.naming = naming;
            this.maxNames = maxNames;
            return this;
        }

        /** Metrics with these settings. */
        public MicrometerLockMetrics build() {
            return new MicrometerLockMetrics(registry, naming == null ? null : new Naming(naming, maxNames), null);
        }
    }
}
