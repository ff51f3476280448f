package dev.fenceguard.core;

/**
 * Receives what fence-guard cannot report by return value or exception: lease loss found by the
 * background renewer, and failures while closing a lease. Methods run on fence-guard's threads and
 * must not block; exceptions they throw are logged and ignored. All methods default to doing nothing.
 *
 * <p>The listener is one subscriber of the client's event stream: it hears each event after the meters
 * ({@link LockMetrics}) and the log, and before {@link Lease#whenLost()} completes. A lease's calls come
 * in order: any {@link #onRenewFailed} first, then {@link #onLeaseLost} if it is lost, then
 * {@link #onReleaseFailed} if its release fails; none comes after the lease was released. While
 * {@link #onRenewFailed} runs, the lease cannot be released or declared lost on another thread (that is
 * what keeps this order), so never wait there for another thread to release it.
 *
 * @since 0.1
 */
public interface LockListener {

    /**
     * The renewer found that {@code lease} is no longer held (it expired or was taken over), or could
     * not renew it before its local deadline. Work under it must stop writing; its fence will be
     * refused by any resource that has seen a newer one.
     *
     * @param lease the lost lease
     * @param cause the last renewal error, or null if the backend said the lease is gone
     */
    default void onLeaseLost(Lease lease, Throwable cause) {}

    /** One renewal attempt of {@code lease} failed with {@code error}; the renewer tries again while the lease is valid. */
    default void onRenewFailed(Lease lease, Throwable error) {}

    /** Releasing {@code lease} failed with {@code error}; the lock will expire at its TTL. */
    default void onReleaseFailed(Lease lease, Throwable error) {}
}
