package dev.fenceguard.core;

import java.time.Duration;

/**
 * Where a lock client counts and times its lock events, and where fenced-write helpers count stale
 * writes. {@link #automatic()} uses Micrometer's global registry when Micrometer is on the class path
 * and does nothing otherwise; pass {@link dev.fenceguard.core.micrometer.MicrometerLockMetrics#of} to use
 * a registry of your own. The other components have sinks of their own:
 * {@link dev.fenceguard.core.idempotency.IdempotencyMetrics},
 * {@link dev.fenceguard.core.leader.LeaderMetrics} and
 * {@link dev.fenceguard.core.singleflight.SingleflightMetrics}.
 *
 * <p>The lock client publishes each lock event once on its event stream; this sink is one of its
 * subscribers, beside the log, the {@link LockListener} and {@link Lease#whenLost()}, and is called on
 * the thread that publishes. Implementations must be thread-safe and fast; one that throws is logged and
 * ignored, and the other subscribers still hear the event. {@link #none()} is not called at all.
 *
 * @since 0.1
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
     * A purge removed {@code removed} fence records of {@code kind} ({@code tombstone} or {@code lock}) from
     * {@code store} ({@code postgres}, ...); called once per batch that removed any.
     *
     * @since 0.1
     */
    default void purged(String store, String kind, long removed) {}

    /**
     * An {@code acquire} with a wait ended after {@code waited} (backoff included): with a lease if
     * {@code acquired}, else because the wait ran out.
     */
    default void acquireWaited(String backend, Duration waited, boolean acquired) {}

    /**
     * The metrics to report the events of lock {@code key} to. The client calls this for every lock
     * event, so it must be fast. The default returns this object: no meter tells locks apart. A
     * {@link dev.fenceguard.core.micrometer.MicrometerLockMetrics} built with
     * {@link dev.fenceguard.core.micrometer.MicrometerLockMetrics.Builder#withLockNames lock names}
     * returns a view whose meters carry a bounded {@code lock.name} tag.
     *
     * @since 0.1
     */
    default LockMetrics forLock(LockKey key) {
        return this;
    }

    /** Micrometer's global registry if Micrometer is present, otherwise {@link #none()}. */
    static LockMetrics automatic() {
        return dev.fenceguard.core.internal.Micrometer.present() ? dev.fenceguard.core.micrometer.MicrometerLockMetrics.global() : none();
    }

    /** Metrics that record nothing (and are not even called). */
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
