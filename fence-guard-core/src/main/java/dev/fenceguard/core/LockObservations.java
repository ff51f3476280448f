package dev.fenceguard.core;

import java.util.Locale;

/**
 * Where fence-guard reports what it does as observations: one per acquire (its wait included),
 * {@code withLock}, renewal, release and fenced write, each with a name, low-cardinality key values
 * (backend, outcome, ...) and the lock key only as a short hash, never the lock id. With Micrometer's
 * Observation API these become traces (and timers, if the registry has a meter handler): pass
 * {@link dev.fenceguard.core.micrometer.MicrometerLockObservations#of} to
 * {@link LockClient.Builder#withObservations} and to each fenced-write helper. The default,
 * {@link #none()}, observes nothing and costs nothing: no Micrometer class is even loaded.
 *
 * <p>Nesting: the acquire, renewals and release of a {@code withLock} are children of its observation,
 * and while the work runs that observation is the current one on the work's thread, so a fenced write
 * the work makes (observed with the same registry) is its child. Other operations take the calling
 * thread's current observation, if any, as parent. docs/metrics.md lists every observation.
 *
 * <p>Implement this interface only to bridge another tracing API; implementations must be thread-safe
 * and fast, and must not throw.
 *
 * @since 0.1
 */
public interface LockObservations {

    /**
     * What a lock client observes; the observation name is {@link #observationName()}.
     *
     * @since 0.1
     */
    enum Operation {
        /** {@code fenceguard.acquire}: {@code tryAcquire} or {@code acquire}, its whole wait included. */
        ACQUIRE,
        /** {@code fenceguard.with.lock}: a {@code withLock}, from the start of its acquire to its release. */
        WITH_LOCK,
        /** {@code fenceguard.renew}: one extension of a lease, by the background renewal or by {@code extend}. */
        RENEW,
        /** {@code fenceguard.release}: one release of a lease. */
        RELEASE;

        private final String observationName = "fenceguard." + name().toLowerCase(Locale.ROOT).replace('_', '.');

        /** The observation's name, e.g. {@code fenceguard.with.lock}. */
        public String observationName() {
            return observationName;
        }
    }

    /** The name of the observation of one fenced write. */
    String WRITE = "fenceguard.write";

    /**
     * Starts observing a lock operation.
     *
     * @param operation what is observed
     * @param backend the backend's name (a low-cardinality key value)
     * @param key the lock key; implementations record only a short hash of it
     * @param parent the observation this one belongs to, or null for the calling thread's current one
     * @return the running observation; the caller ends it with {@link Observed#stop()}
     */
    Observed start(Operation operation, String backend, LockKey key, Observed parent);

    /**
     * Starts observing one fenced write, as a child of the calling thread's current observation (the
     * {@code withLock} whose work makes the write, for one).
     *
     * @param backend the store: {@code postgres}, {@code redis}, {@code firestore}, ...
     * @param resourceType a bounded kind of resource: a table or collection name, a Redis data type;
     *     never a row key or document id
     * @param operation the write operation, e.g. {@code update}, {@code upsert}, {@code delete}
     * @return the running observation
     */
    Observed startWrite(String backend, String resourceType, String operation);

    /** Observations that record nothing and cost nothing. */
    static LockObservations none() {
        return NoObservations.INSTANCE;
    }

    /**
     * One running observation. fence-guard calls it from one thread at a time and stops it once.
     *
     * @since 0.1
     */
    interface Observed {

        /** Sets the low-cardinality key value {@code outcome}, e.g. {@code acquired}. */
        void outcome(String outcome);

        /** Records the lease's fence (a high-cardinality key value: fences are not secret). */
        void fence(FenceToken fence);

        /** Records a moment worth seeing on the trace, e.g. {@code fenceguard.lease.lost}. */
        void event(String name);

        /** Records the error the operation ended with. */
        void error(Throwable error);

        /**
         * Makes this the current observation of the calling thread until the scope is closed, on the
         * same thread.
         */
        Scope openScope();

        /** Ends the observation. */
        void stop();
    }

    /**
     * An open scope of an {@link Observed}; closing it restores the thread's previous observation.
     *
     * @since 0.1
     */
    interface Scope extends AutoCloseable {
        @Override
        void close();
    }
}

/** One constant for the observations, the observation and the scope that do nothing. */
enum NoObservations implements LockObservations, LockObservations.Observed, LockObservations.Scope {
    INSTANCE;

    @Override
    public Observed start(Operation operation, String backend, LockKey key, Observed parent) {
        return this;
    }

    @Override
    public Observed startWrite(String backend, String resourceType, String operation) {
        return this;
    }

    @Override
    public void outcome(String outcome) {}

    @Override
    public void fence(FenceToken fence) {}

    @Override
    public void event(String name) {}

    @Override
    public void error(Throwable error) {}

    @Override
    public Scope openScope() {
        return this;
    }

    @Override
    public void stop() {}

    @Override
    public void close() {}
}
