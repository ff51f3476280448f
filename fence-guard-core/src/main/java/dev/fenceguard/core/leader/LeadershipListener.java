package dev.fenceguard.core.leader;

/**
 * Told when this process becomes leader and when it stops being one. Calls come from the election's
 * or the lock client's threads (timer or backend callback threads): return quickly and hand long work
 * to an executor of your own. A listener that throws is logged and otherwise ignored.
 *
 * <p>Calls never overlap and never come out of order: one at a time, {@code elected(t)} before
 * {@code revoked(t)}, and {@code revoked(t)} before the next term's {@code elected}. A term that ends
 * while its {@code elected} call is still running is revoked when that call returns, on its thread; the
 * lock is released only after {@code revoked} returns. {@code elected} is called only for a term whose
 * lease was valid when the term began.
 *
 * @since 0.1
 */
public interface LeadershipListener {

    /** Why a term ended for this process. */
    enum Revocation {
        /** {@link LeaderElection#resign()} was called: the lock was given up for another candidate. */
        RESIGNED,
        /** {@link LeaderElection#stop()} or {@code close()} was called. */
        STOPPED,
        /** The backend answered a renewal that the lock is no longer ours (expired there or taken over). */
        TAKEN_OVER,
        /** No renewal was confirmed before the lease's local deadline (backend unreachable or slow). */
        UNREACHABLE,
        /** The lease's local deadline had passed before a renewal could be sent (this process was paused). */
        EXPIRED
    }

    /** This process now leads, for {@code leadership}'s term. */
    default void elected(Leadership leadership) {}

    /**
     * This process no longer leads for {@code leadership}'s term. By the time this is called
     * {@link Leadership#isValid()} is false; stop the leader's work and expect its fenced writes to be refused.
     */
    default void revoked(Leadership leadership, Revocation why) {}
}
