package dev.fenceguard.core;

import dev.fenceguard.core.internal.EventPublisher;
import dev.fenceguard.core.internal.Redacted;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event stream of a lock client and its subscribers: the meters ({@link LockMetrics}), the
 * {@code withLock} run (its observation's loss event), the log, the {@link LockListener} and
 * {@link Lease#whenLost()}, in that order. The client and its renewer publish each {@link LockEvent} once and
 * call none of these themselves.
 */
final class LockEvents {

    /** The listener of a client that was given none: not subscribed at all. */
    static final LockListener NO_LISTENER = new LockListener() {};

    private static final Logger log = LoggerFactory.getLogger(LockClient.class);
    private static final int MAX_WARNED_KEYS = 10_000;
    /** Keys already warned about for high fences: "once per key per process", bounded. */
    private static final Set<LockKey> WARNED_KEYS = ConcurrentHashMap.newKeySet();

    private LockEvents() {}

    /** The stream of a client on {@code backend}. */
    static EventPublisher<LockEvent> publisher(String backend, LockMetrics metrics, LockListener listener) {
        // Each subscriber names what it hears: the most frequent events (a refusal, a wait, a release) have the
        // meters as their only subscriber, so without meters they are not even built.
        return EventPublisher.<LockEvent>builder("lock client on " + backend)
                .subscribeIf(metrics != LockMetrics.none(), "LockMetrics", new Meters(backend, metrics),
                        Set.of(LockEvent.AcquireRefused.class, LockEvent.Granted.class, LockEvent.AcquireWaited.class,
                                LockEvent.RenewFailed.class, LockEvent.Lost.class, LockEvent.Released.class))
                .subscribe("withLock observation", LockEvents::toRun, Set.of(LockEvent.Lost.class))
                .subscribe("log", LockEvents::log, Set.of(LockEvent.Granted.class, LockEvent.RenewFailed.class,
                        LockEvent.Lost.class, LockEvent.ReleaseFailed.class))
                .subscribeIf(listener != NO_LISTENER, "LockListener", new Listener(listener),
                        Set.of(LockEvent.RenewFailed.class, LockEvent.Lost.class, LockEvent.ReleaseFailed.class))
                .subscribe("whenLost", LockEvents::toWhenLost, Set.of(LockEvent.Lost.class))
                .build();
    }

    /**
     * The meters: each event becomes the {@link LockMetrics} calls that docs/metrics.md lists for it. Type
     * tests rather than a pattern switch, most frequent first: this runs for every event of every lease.
     */
    private record Meters(String backend, LockMetrics metrics) implements Consumer<LockEvent> {
        @Override
        public void accept(LockEvent event) {
            LockMetrics m = metrics.forLock(event.key());
            if (event instanceof LockEvent.Granted e) {
                m.acquireAttempt(backend, LockMetrics.AcquireOutcome.ACQUIRED, e.latency());
                if (e.lease().fence().value() > FenceToken.WARN_THRESHOLD) {
                    m.highFence(backend);
                }
                m.leaseStarted(backend);
            } else if (event instanceof LockEvent.Released e) {
                m.held(backend, e.heldFor());
                m.leaseEnded(backend);
            } else if (event instanceof LockEvent.AcquireWaited e) {
                m.acquireWaited(backend, e.waited(), e.acquired());
            } else if (event instanceof LockEvent.AcquireRefused e) {
                m.acquireAttempt(backend, e.outcome(), e.latency());
            } else if (event instanceof LockEvent.RenewFailed) {
                m.renewFailed(backend);
            } else if (event instanceof LockEvent.Lost e) {
                m.renewFailed(backend);
                m.leaseLost(backend, e.cause());
                m.leaseEnded(backend);
                m.held(backend, e.heldFor());
            }
        }
    }

    /** The user's listener: told of what it cannot learn by return value or exception. */
    private record Listener(LockListener listener) implements Consumer<LockEvent> {
        @Override
        public void accept(LockEvent event) {
            if (event instanceof LockEvent.RenewFailed e) {
                listener.onRenewFailed(e.lease(), e.error());
            } else if (event instanceof LockEvent.Lost e) {
                listener.onLeaseLost(e.lease(), e.error());
            } else if (event instanceof LockEvent.ReleaseFailed e) {
                listener.onReleaseFailed(e.lease(), e.error());
            }
        }
    }

    /** The {@code withLock} the lost lease served marks its observation at the moment of loss. */
    private static void toRun(LockEvent event) {
        WithLockRun run = ((LockEvent.Lost) event).lease().run();
        if (run != null) {
            run.leaseLost();
        }
    }

    /** Last, so that work hanging off {@link Lease#whenLost()} starts once the loss is counted and reported. */
    private static void toWhenLost(LockEvent event) {
        LockEvent.Lost lost = (LockEvent.Lost) event;
        lost.lease().signalLost(lost.cause());
    }

    /** The log: a grant at debug (and a high fence once per key at warn), renewal failures, losses, failed releases. */
    private static void log(LockEvent event) {
        if (event instanceof LockEvent.Granted e) {
            Lease lease = e.lease();
            long fence = lease.fence().value();
            if (fence > FenceToken.WARN_THRESHOLD) {
                warnOnce(lease.key(), fence);
            }
            if (log.isDebugEnabled()) { // redacted() hashes (SHA-256) on every acquire otherwise, logged or not
                log.debug("acquired lock '{}' fence {} lock {} until {}", lease.key(), fence, lease.lockId().redacted(),
                        lease.expiresAt());
            }
        } else if (event instanceof LockEvent.RenewFailed e) {
            Lease lease = e.lease();
            if (!e.repeated()) { // once per lease at warn: a flapping backend must not flood the log
                log.warn("renewing lock '{}' (lock {}) failed: {}", lease.key(), lease.lockId().redacted(),
                        Redacted.describe(e.error()));
            } else if (log.isDebugEnabled()) {
                log.debug("renewing lock '{}' (lock {}) failed again: {}", lease.key(), lease.lockId().redacted(),
                        Redacted.describe(e.error()));
            }
        } else if (event instanceof LockEvent.Lost e) {
            Lease lease = e.lease();
            log.warn("lost lock '{}' fence {} (lock {}): {}", lease.key(), lease.fence().value(), lease.lockId().redacted(),
                    e.error() == null ? "the backend no longer holds it, or no renewal answered before the local deadline"
                            : "renewal failed until the lease ran out: " + Redacted.describe(e.error()));
        } else if (event instanceof LockEvent.ReleaseFailed e) {
            log.warn("releasing lock '{}' (lock {}) failed; it will expire at its TTL: {}", e.key(), e.lease().lockId().redacted(),
                    Redacted.describe(e.error()));
        }
    }

    private static void warnOnce(LockKey key, long fence) {
        if (WARNED_KEYS.size() >= MAX_WARNED_KEYS) {
            WARNED_KEYS.clear(); // bounded memory beats perfect once-only logging
        }
        if (WARNED_KEYS.add(key)) {
            log.warn("lock '{}' issued fence {}, above {}; fences stop at {} and the key then refuses to lock",
                    key, fence, FenceToken.WARN_THRESHOLD, FenceToken.MAX_VALUE);
        }
    }
}
