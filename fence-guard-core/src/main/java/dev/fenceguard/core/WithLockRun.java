package dev.fenceguard.core;

import dev.fenceguard.core.internal.Redacted;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

/**
 * One {@code withLock}, shared by the blocking and the asynchronous face: its observation (parent of
 * the acquire, renewals and release), the renewal it starts, and the thread context of its work.
 */
final class WithLockRun {

    static final String LEASE_LOST_EVENT = "fenceguard.lease.lost";

    private final AsyncLockClient client;
    private final LockKey key;
    private final LockObservations.Observed observed;
    private boolean lost;
    private boolean ended;

    WithLockRun(AsyncLockClient client, LockKey key) {
        this.client = client;
        this.key = key;
        this.observed = client.observations().start(LockObservations.Operation.WITH_LOCK, client.backend().name(), key, null);
    }

    LockObservations.Observed observed() {
        return observed;
    }

    CompletableFuture<Optional<Lease>> acquire(Duration ttl, Duration maxWait) {
        return client.acquire(key, ttl, maxWait, observed);
    }

    /**
     * The lease is ours: renew it, and make it and this observation current on this thread until the
     * returned scope is closed (on this thread).
     */
    LockObservations.Scope enter(Lease lease) {
        lease.attach(this);
        observed.fence(lease.fence());
        client.renewer().start(lease);
        LockObservations.Scope observing = observed.openScope();
        LockObservations.Scope context = LockContext.enter(lease);
        return () -> {
            context.close();
            observing.close();
        };
    }

    /** Told by the renewer, at the moment the lease is declared lost. */
    synchronized void leaseLost() {
        lost = true;
        if (!ended) {
            observed.event(LEASE_LOST_EVENT);
        }
    }

    /** The acquire failed or was cancelled; nothing ran. */
    void acquireFailed(Throwable error) {
        end(cancelled(error) ? "cancelled" : "acquire_error", cancelled(error) ? null : Redacted.chain(error, 0));
    }

    /** The key stayed held for the whole wait. */
    void notAcquired() {
        end("not_acquired", null);
    }

    /** The work ended, with {@code failure} or normally (null), and the lease was released. */
    synchronized void workEnded(Throwable failure) {
        // Loss outranks how the work ended: it is what a trace of a fenced job is read for.
        String outcome = lost ? "lost" : failure == null ? "completed" : cancelled(failure) ? "cancelled" : "failed";
        end(outcome, failure == null || cancelled(failure) ? null : failure);
    }

    private synchronized void end(String outcome, Throwable error) {
        if (ended) {
            return;
        }
        ended = true;
        if (error != null) {
            observed.error(error);
        }
        observed.outcome(outcome);
        observed.stop();
    }

    private static boolean cancelled(Throwable e) {
        return e instanceof CancellationException || e instanceof InterruptedException;
    }
}
