package dev.fenceguard.core;

import dev.fenceguard.core.internal.EventPublisher;
import dev.fenceguard.core.internal.Redacted;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps leases alive and tells when one is lost. Every extension, whether the background renewal or a
 * user's {@link LockClient#extend}, goes through {@link #extend}, so the client's event stream
 * ({@link LockEvents}: meters, log, listener, whenLost) hears about both alike.
 *
 * <p>No thread per lease: a renewal is a timer task that sends one asynchronous extend, bounded by the
 * time the lease has left, and schedules the next when the answer comes, a third of the time the lease
 * then has left later (a quarter after a failure). A second timer per lease, the
 * watchdog, fires at the local deadline: if no renewal moved the deadline by then, the lease is
 * declared lost there and then, whatever the backend is doing. A late answer never revives it: the
 * lease stays lost and the lock the server extended for it is released.
 */
final class LeaseRenewer {

    private static final Logger log = LoggerFactory.getLogger(LockClient.class);

    private final LockBackend backend;
    private final TimeSource time;
    private final EventPublisher<LockEvent> events;
    private final LockObservations observations;
    private final Duration releaseTimeout;
    private final Map<Lease, Renewal> active = new ConcurrentHashMap<>();

    /** Timers and the last error of one renewed lease. */
    private static final class Renewal {
        volatile Future<?> next;
        volatile Future<?> watchdog;
        volatile Throwable lastError;
        volatile boolean warned;
    }

    LeaseRenewer(LockBackend backend, TimeSource time, EventPublisher<LockEvent> events, LockObservations observations,
            Duration releaseTimeout) {
        this.backend = backend;
        this.time = time;
        this.events = events;
        this.observations = observations;
        this.releaseTimeout = releaseTimeout;
    }

    /**
     * Renews {@code lease} until {@link #stop}, release or loss, each time when a third of the time it has
     * left has passed: a lease handed out with little left (its acquire waited) is renewed early, and the
     * first renewal is scheduled ahead of the watchdog, so one is attempted before the lease can be declared
     * lost for lack of one.
     */
    void start(Lease lease) {
        Renewal r = new Renewal();
        if (active.putIfAbsent(lease, r) != null) {
            return; // already renewed
        }
        schedule(lease, r, period(lease));
        armWatchdog(lease, r);
    }

    /** Stops renewing {@code lease}; it keeps its state. */
    void stop(Lease lease) {
        Renewal r = active.remove(lease);
        if (r != null) {
            cancel(r.next);
            cancel(r.watchdog);
        }
    }

    /** How many leases are being renewed (for tests). */
    int renewing() {
        return active.size();
    }

    /**
     * One extension: backend expiry = backend now + {@code ttl}, bounded by the time the lease has left.
     *
     * @return a future of true if extended; false if the lease is not held or the backend no longer holds
     *     it (the lease is then lost and the listener told); completed exceptionally if the call failed
     */
    CompletableFuture<Boolean> extend(Lease lease, Duration ttl) {
        if (!lease.isHeld()) {
            return CompletableFuture.completedFuture(false);
        }
        Renewal r = active.get(lease);
        LockObservations.Observed observed = observations.start(LockObservations.Operation.RENEW, backend.name(), lease.key(),
                lease.parentObservation());
        observed.fence(lease.fence());
        Duration left = lease.remaining();
        if (left.isZero()) {
            Throwable last = r == null ? null : r.lastError;
            lost(lease, last, last == null ? LossCause.EXPIRED : LossCause.UNREACHABLE);
            AsyncLockClient.end(observed, null, "lost");
            return CompletableFuture.completedFuture(false);
        }
        long sent = time.nanoTime();
        CompletableFuture<Optional<Instant>> call = Calls.bounded(time, left, lease.key(), "extend",
                () -> backend.extend(lease.key(), lease.lockId(), ttl, left),
                late -> late.ifPresent(expiry -> undoLateExtension(lease)));
        return call.handle((expiry, error) -> {
            if (error != null) {
                Throwable e = Calls.unwrap(error);
                AsyncLockClient.end(observed, e, null);
                failed(lease, e);
                throw Calls.rethrow(e);
            }
            if (expiry.isEmpty()) {
                AsyncLockClient.end(observed, null, "lost");
                lost(lease, null, LossCause.TAKEN_OVER);
                return false;
            }
            if (!lease.extended(expiry.get(), sent, ttl)) {
                AsyncLockClient.end(observed, null, "not_held");
                undoLateExtension(lease); // lost or released while the call was out: never revive it (see there)
                return false;
            }
            AsyncLockClient.end(observed, null, "renewed");
            if (r != null) {
                r.lastError = null;
                armWatchdog(lease, r);
            }
            return true;
        });
    }

    private void renew(Lease lease, Renewal r) {
        if (active.get(lease) != r || !lease.isHeld()) {
            return;
        }
        extend(lease, lease.ttl()).whenComplete((ok, error) -> {
            if (active.get(lease) != r || !lease.isHeld()) {
                return;
            }
            // After a failure try again sooner, while there is still time to save the lease.
            Duration delay = error == null ? period(lease) : atLeastOneMilli(lease.remaining().dividedBy(4), lease);
            schedule(lease, r, delay);
        });
    }

    private void failed(Lease lease, Throwable e) {
        Renewal r = active.get(lease);
        // Published only while held, and before a loss or release can be: a lease's failures never follow its end.
        boolean held = lease.whileHeld(() -> {
            boolean repeated = r != null && r.warned;
            if (r != null) {
                r.lastError = e;
                r.warned = true;
            }
            events.publish(new LockEvent.RenewFailed(lease, e, repeated));
        });
        if (!held) {
            return; // already lost or released: this answer changes nothing
        }
        if (!lease.isValid()) {
            lost(lease, e, LossCause.UNREACHABLE);
        }
    }

    /**
     * Declares {@code lease} lost, once: stops renewing it and publishes the loss, which the meters, the
     * {@code withLock} run, the log, the listener and {@link Lease#whenLost()} hear, in that order.
     */
    void lost(Lease lease, Throwable cause, LossCause why) {
        if (!lease.markLost()) {
            return; // released or already lost
        }
        stop(lease);
        events.publish(new LockEvent.Lost(lease, cause, why, Duration.ofNanos(time.nanoTime() - lease.acquiredAtNanos())));
    }

    /**
     * An extension answered after the lease was declared lost: free the lock it kept alive, once. A lease its
     * owner released needs nothing: the owner's release reached the server after this extension did.
     */
    private void undoLateExtension(Lease lease) {
        if (!lease.claimReleaseOfLost()) {
            return;
        }
        Calls.bounded(time, releaseTimeout, lease.key(), "release", () -> backend.release(lease.key(), lease.lockId(), releaseTimeout), null)
                .whenComplete((released, error) -> log.debug("lock '{}' (lock {}): late extension undone: {}", lease.key(),
                        lease.lockId().redacted(), error == null ? released : Redacted.describe(error)));
    }

    private void armWatchdog(Lease lease, Renewal r) {
        cancel(r.watchdog);
        Duration left = lease.remaining();
        r.watchdog = time.schedule(left, () -> {
            if (active.get(lease) != r || !lease.isHeld()) {
                return;
            }
            if (lease.remaining().isZero()) {
                Throwable last = r.lastError;
                lost(lease, last != null ? last : new FenceGuardException(ErrorCode.TIMEOUT, lease.key().value(),
                        "no renewal answered before the lease's local deadline"), LossCause.UNREACHABLE);
            } else {
                armWatchdog(lease, r); // the deadline moved meanwhile
            }
        });
    }

    private void schedule(Lease lease, Renewal r, Duration delay) {
        r.next = time.schedule(delay, () -> renew(lease, r));
    }

    /** A third of the time {@code lease} has left: the next renewal is due then, whatever its TTL. */
    private static Duration period(Lease lease) {
        return atLeastOneMilli(lease.remaining().dividedBy(3), lease);
    }

    /**
     * {@code d}, but at least 1 ms (so a failing backend is not hammered in a lease's last moments), and never
     * later than the lease's deadline (so the renewal still runs before the watchdog).
     */
    private static Duration atLeastOneMilli(Duration d, Lease lease) {
        Duration floor = Duration.ofMillis(1);
        if (d.compareTo(floor) >= 0) {
            return d;
        }
        Duration left = lease.remaining();
        return left.compareTo(floor) < 0 ? left : floor;
    }

    private static void cancel(Future<?> f) {
        if (f != null) {
            f.cancel(false);
        }
    }
}
