package dev.fenceguard.core.micrometer;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.internal.ShortHash;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;

/**
 * {@link LockObservations} as Micrometer {@link Observation}s on an {@link ObservationRegistry}: traces
 * through a tracing bridge, timers through a meter handler. Needs micrometer-observation on the class
 * path; it is loaded only when used. On a no-op registry ({@link ObservationRegistry#NOOP}) nothing is
 * created.
 *
 * <pre>{@code
 * LockObservations observations = MicrometerLockObservations.of(observationRegistry);
 * LockClient locks = LockClient.builder(backend).withObservations(observations).build();
 * FencedTable orders = FencedTable.builder("public", "orders", "id", "fence_token").withObservations(observations).build();
 * }</pre>
 *
 * <p>Key values: low cardinality {@code backend}, {@code outcome} (and, for writes,
 * {@code resource.type} and {@code operation}); high cardinality {@code lock.key.hash} (8 hex digits of
 * the SHA-256 of the key: keys are unbounded and may name a customer) and {@code fence}. Never the lock
 * id. docs/metrics.md lists the observations and their outcomes. Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class MicrometerLockObservations implements LockObservations {

    private final ObservationRegistry registry;

    private MicrometerLockObservations(ObservationRegistry registry) {
        this.registry = registry;
    }

    /**
     * Observations on {@code registry}.
     *
     * @throws NullPointerException if {@code registry} is null
     */
    public static MicrometerLockObservations of(ObservationRegistry registry) {
        return new MicrometerLockObservations(Objects.requireNonNull(registry, "registry"));
    }

    @Override
    public Observed start(Operation operation, String backend, LockKey key, Observed parent) {
        if (registry.isNoop()) {
            return LockObservations.none().start(operation, backend, key, parent);
        }
        Observation o = Observation.createNotStarted(operation.observationName(), registry)
                .lowCardinalityKeyValue("backend", backend)
                .highCardinalityKeyValue("lock.key.hash", ShortHash.of(key.utf8()));
        if (parent instanceof Running p) {
            o.parentObservation(p.observation);
        }
        return new Running(o.start());
    }

    @Override
    public Observed startWrite(String backend, String resourceType, String operation) {
        if (registry.isNoop()) {
            return LockObservations.none().startWrite(backend, resourceType, operation);
        }
        return new Running(Observation.createNotStarted(LockObservations.WRITE, registry)
                .lowCardinalityKeyValue("backend", backend)
                .lowCardinalityKeyValue("resource.type", resourceType)
                .lowCardinalityKeyValue("operation", operation)
                .start());
    }

    /** One started observation. */
    private static final class Running implements Observed {
        final Observation observation;

        Running(Observation observation) {
            this.observation = observation;
            // Every observation carries an outcome, so that timers made from them share one set of tags.
            observation.lowCardinalityKeyValue("outcome", "unknown");
        }

        @Override
        public void outcome(String outcome) {
            observation.lowCardinalityKeyValue("outcome", outcome);
        }

        @Override
        public void fence(FenceToken fence) {
            observation.highCardinalityKeyValue("fence", Long.toString(fence.value()));
        }

        @Override
        public void event(String name) {
            observation.event(Observation.Event.of(name));
        }

        @Override
        public void error(Throwable error) {
            observation.error(error);
        }

        @Override
        public Scope openScope() {
            Observation.Scope scope = observation.openScope();
            return scope::close;
        }

        @Override
        public void stop() {
            observation.stop();
        }
    }
}
