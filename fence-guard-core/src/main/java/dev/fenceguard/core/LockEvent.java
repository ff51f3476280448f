package dev.fenceguard.core;

import java.time.Duration;

/**
 * What happens to the locks of one client (so of one backend, named by the subscribers), published once on its stream ({@link LockEvents}) for the
 * meters, the log, the {@link LockListener}, the {@code withLock} run and {@link Lease#whenLost()} to hear.
 *
 * <p>The events of one lease come in this order: {@link Granted}; any number of {@link RenewFailed}; at
 * most one of {@link Lost} and {@link Released}; at most one {@link ReleaseFailed}. {@link Granted} is
 * published before the lease is handed out, and nothing but {@link ReleaseFailed} after the lease stopped
 * being held.
 */
sealed interface LockEvent {

    /** The lock key. */
    LockKey key();

    /** One acquire attempt that gave no lease: the key was held, the call failed, or its grant was unusable. */
    record AcquireRefused(LockKey key, LockMetrics.AcquireOutcome outcome, Duration latency) implements LockEvent {}

    /** One acquire attempt that gave {@code lease}, {@code latency} after it was sent. */
    record Granted(Lease lease, Duration latency) implements LockEvent {
        @Override
        public LockKey key() {
            return lease.key();
        }
    }

    /** An {@code acquire} with a wait ended after {@code waited}, with a lease if {@code acquired}. */
    record AcquireWaited(LockKey key, Duration waited, boolean acquired) implements LockEvent {}

    /** One renewal of a held lease failed; {@code repeated} if an earlier one of the same lease failed too. */
    record RenewFailed(Lease lease, Throwable error, boolean repeated) implements LockEvent {
        @Override
        public LockKey key() {
            return lease.key();
        }
    }

    /**
     * A held lease was declared lost after {@code heldFor}; {@code error} is the last renewal error, or null if
     * the backend said the lease is gone.
     */
    record Lost(Lease lease, Throwable error, LossCause cause, Duration heldFor) implements LockEvent {
        @Override
        public LockKey key() {
            return lease.key();
        }
    }

    /** A held lease was given up by its owner after {@code heldFor}; its release is being sent. */
    record Released(Lease lease, Duration heldFor) implements LockEvent {
        @Override
        public LockKey key() {
            return lease.key();
        }
    }

    /** The release of a lease failed or went unanswered: the lock expires at its TTL. */
    record ReleaseFailed(Lease lease, Throwable error) implements LockEvent {
        @Override
        public LockKey key() {
            return lease.key();
        }
    }
}
