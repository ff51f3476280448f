package dev.fenceguard.core;

import java.time.Duration;

/**
 * Where fence-guard reports what it measures. {@link #automatic()} uses Micrometer's global registry
 * when Micrometer is on the class path and does nothing otherwise; pass
 * {@link dev.fenceguard.core.micrometer.MicrometerLockMetrics#of} to use a registry of your own.
 * Implementations must be thread-safe and fast.
 */
public interface LockMetrics {

    /** How one acquire attempt ended. */
    enum AcquireOutcome { ACQUIRED, HELD, ERROR }

    /** One backend acquire attempt took {@code latency} and ended with {@code outcome}. */
    void acquireAttempt(String backend, AcquireOutcome outcome, Duration latency);

    /** A lease was held for {@code holdTime} (acquisition to release or loss). */
    void held(String backend, Duration holdTime);

    /** A background renewal failed (error or lease gone). */
    void renewFailed(String backend);

    /** A fence above {@link FenceToken#WARN_THRESHOLD} was issued. */
    void highFence(String backend);

    /** A fenced write to {@code resourceType} was rejected as stale. */
    void staleWriteRejected(String resourceType);

    /** A lease was declared lost while it was held: the event a fencing library exists for. */
    default void leaseLost(String backend, LossCause cause) {}

    /** A lease was granted to this process; with {@link #leaseEnded} it drives a held-now gauge. */
    default void leaseStarted(String backend) {}

    /** A lease of this process was released or declared lost. */
    default void leaseEnded(String backend) {}

    /**
     * An {@code acquire} with a wait ended after {@code waited} (backoff included): with a lease if
     * {@code acquired}, else because the wait ran out.
     */
    default void acquireWaited(String backend, Duration waited, boolean acquired) {}

    /** How an idempotent call was answered without running its work. */
    enum IdempotencyAnswer {
        /** A recorded outcome was replayed (a completed result or a final failure). */
        HIT,
        /** The key was claimed with a different request fingerprint. */
        CONFLICT,
        /** Another holder's claim was still live. */
        IN_PROGRESS
    }

    /**
     * An idempotency store on {@code backend} answered {@code answer} instead of running the work.
     *
     * @since 0.3
     */
    default void idempotency(String backend, IdempotencyAnswer answer) {}

    /**
     * This process was elected leader of {@code leadership} for term {@code term}.
     *
     * @since 0.3
     */
    default void leaderElected(String leadership, long term) {}

    /**
     * This process's term of {@code leadership} ended; {@code lost} if it was taken from it (renewal
     * refused or unconfirmed, or the process paused past its lease) rather than given up.
     *
     * @since 0.3
     */
    default void leaderTermEnded(String leadership, boolean lost) {}

    /**
     * The metrics to report the events of lock {@code key} to. The client calls this for every lock
     * event, so it must be fast. The default returns this object: no meter tells locks apart. A
     * {@link dev.fenceguard.core.micrometer.MicrometerLockMetrics} built with
     * {@link dev.fenceguard.core.micrometer.MicrometerLockMetrics.Builder#withLockNames lock names}
     * returns a view whose meters carry a bounded {@code lock.name} tag.
     *
     * @since 0.2
     */
    default LockMetrics forLock(LockKey key) {
        return this;
    }

    /** Micrometer's global registry if Micrometer is present, otherwise {@link #none()}. */
    static LockMetrics automatic() {
        try {
            Class.forName("io.micrometer.core.instrument.Metrics", false, LockMetrics.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return none();
        }
        return dev.fenceguard.core.micrometer.MicrometerLockMetrics.global();
    }

    /** Metrics that record nothing. */
    static LockMetrics none() {
        return NoMetrics.INSTANCE;
    }
}

enum NoMetrics implements LockMetrics {
    INSTANCE;

    @Override
    public void acquireAttempt(String backend, AcquireOutcome outcome, Duration latency) {}

    @Override
    public void held(String backend, Duration holdTime) {}

    @Override
    public void renewFailed(String backend) {}

    @Override
    public void highFence(String backend) {}

    @Override
    public void staleWriteRejected(String resourceType) {}
}
