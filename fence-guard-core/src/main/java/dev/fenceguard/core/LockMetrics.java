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
