package dev.fenceguard.core;

/**
 * Why a lease was declared lost: the value of {@link Lease#whenLost()}, and what
 * {@link LockMetrics#leaseLost} counts.
 *
 * @since 0.1
 */
public enum LossCause {
    /** The backend answered that it no longer holds the lease for us (it expired there, or was taken over). */
    TAKEN_OVER,
    /** Renewals failed or went unanswered until the lease's local deadline. */
    UNREACHABLE,
    /** The local deadline had passed before a renewal could be sent. */
    EXPIRED
}
