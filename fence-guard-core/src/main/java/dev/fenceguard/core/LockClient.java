package dev.fenceguard.core;

import dev.fenceguard.core.internal.Backoff;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.internal.Redacted;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lock client: takes, renews and releases leases on a {@link LockBackend} and hands out their
 * fences.
 *
 * <p>A lock is a lease: it can expire while its holder is paused (GC, swap, a slow network), and the
 * paused holder cannot know. The fence each lease carries lets the <em>resource</em> refuse that
 * zombie's writes; pass {@link Lease#fence()} to a fenced-write helper on every write.
 *
 * <pre>{@code
 * LockClient locks = LockClient.builder(PostgresLockBackend.builder(dataSource).build()).build();
 * locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease ->
 *         orderWriter.update(connection, 42, newState, lease.fence()).orThrow());
 * }</pre>
 *
 * <p>Validation happens before any I/O: keys must satisfy {@link LockKey}, TTLs must be whole
 * milliseconds from 1 ms to 30 days, waits must not be negative. Instances are immutable and
 * thread-safe; build one per backend and share it.
 */
public final class LockClient {

    private static final Logger log = LoggerFactory.getLogger(LockClient.class);
    private static final int MAX_WARNED_KEYS = 10_000;
    /** Keys already warned about for high fences: "once per key per process", bounded. */
    private static final Set<LockKey> WARNED_KEYS = ConcurrentHashMap.newKeySet();

    private final LockBackend backend;
    private final TimeSource time;
    private final LockListener listener;
    private final LockMetrics metrics;
    private final Backoff backoff;

    private LockClient(Builder b) {
        this.backend = b.backend;
        this.time = b.time;
        this.listener = b.listener;
        this.metrics = b.metrics;
        this.backoff = b.backoff;
    }

    /**
     * A builder for a client over {@code backend}.
     *
     * @throws NullPointerException if {@code backend} is null
     */
    public static Builder builder(LockBackend backend) {
        return new Builder(backend);
    }

    /** A client over {@code backend} with default settings. */
    public static LockClient of(LockBackend backend) {
        return builder(backend).build();
    }

    /** The backend this client talks to. */
    public LockBackend backend() {
        return backend;
    }

    /**
     * One attempt to take the lock on {@code key}, without waiting.
     *
     * @param key the lock key (see {@link LockKey})
     * @param ttl the lease duration: whole milliseconds, 1 ms .. 30 days
     * @return the lease, or empty if another live lease holds the key
     * @throws IllegalArgumentException if the key or TTL is invalid (before any I/O)
     * @throws FenceGuardException if the backend fails, or {@code FENCE_EXHAUSTED} if the key has used up
     *     its fences (no lock is left behind)
     */
    public Optional<Lease> tryAcquire(String key, Duration ttl) {
        LockKey lockKey = LockKey.of(key);
        return attempt(lockKey, Checks.ttl(ttl, lockKey));
    }

    /**
     * Takes the lock on {@code key}, retrying with exponential backoff and full jitter for up to
     * {@code maxWait}.
     *
     * @param maxWait how long to keep trying; {@link Duration#ZERO} means one attempt
     * @return the lease, or empty if the key stayed held for {@code maxWait}
     * @throws IllegalArgumentException if the key, TTL or wait is invalid (before any I/O)
     * @throws InterruptedException if interrupted while waiting; no lease is held then
     * @throws FenceGuardException if the backend fails
     */
    public Optional<Lease> acquire(String key, Duration ttl, Duration maxWait) throws InterruptedException {
        LockKey lockKey = LockKey.of(key);
        return acquire(lockKey, Checks.ttl(ttl, lockKey), Checks.maxWait(maxWait, lockKey));
    }

    /**
     * Takes every lock in {@code keys}, in the global {@link LockKey} order (so two callers wanting
     * overlapping sets cannot deadlock), all or nothing: if any key cannot be had within
     * {@code maxWait} (shared by all keys) or a backend call fails, every lease taken so far is
     * released. Duplicate keys are taken once.
     *
     * @return the leases, or empty if some key stayed held
     * @throws IllegalArgumentException if {@code keys} is empty or any key, the TTL or the wait is invalid
     *     (before any I/O)
     * @throws InterruptedException if interrupted while waiting; no lease is held then
     * @throws FenceGuardException if the backend fails; no lease is held then
     */
    public Optional<LeaseSet> acquireAll(Collection<String> keys, Duration ttl, Duration maxWait)
            throws InterruptedException {
        Objects.requireNonNull(keys, "keys");
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("acquireAll needs at least one key");
        }
        List<LockKey> ordered = keys.stream().map(LockKey::of).distinct().sorted().toList();
        Checks.ttl(ttl, ordered.getFirst());
        Checks.maxWait(maxWait, ordered.getFirst());
        long deadline = time.nanoTime() + maxWait.toNanos();
        List<Lease> taken = new ArrayList<>(ordered.size());
        boolean complete = false;
        try {
            for (LockKey key : ordered) {
                Duration left = Duration.ofNanos(Math.max(0, deadline - time.nanoTime()));
                Optional<Lease> lease = acquire(key, ttl, left);
                if (lease.isEmpty()) {
                    log.debug("acquireAll gave up at key '{}' after taking {} of {} keys", key, taken.size(), ordered.size());
                    return Optional.empty();
                }
                taken.add(lease.get());
            }
            complete = true;
            return Optional.of(new LeaseSet(taken));
        } finally {
            if (!complete) {
                for (int i = taken.size() - 1; i >= 0; i--) {
                    closeQuietly(taken.get(i));
                }
            }
        }
    }

    /**
     * Runs {@code work} while holding the lock on {@code key}: acquires it (waiting up to
     * {@code maxWait}), passes the lease to the work, renews it on a virtual thread every third of
     * the TTL, and releases it when the work ends, however it ends.
     *
     * <p>If a renewal finds the lease gone, or cannot renew it before its local deadline, the lease is
     * marked lost ({@link Lease#isValid()} turns false) and the {@link LockListener} is told. The work
     * is not interrupted: it should check {@code isValid()} between steps, and its writes, which carry
     * the fence, are refused by any resource that has seen a newer lease.
     *
     * @param work the work; must not return null
     * @return the work's result, or empty if the lock could not be had within {@code maxWait}
     * @throws E whatever the work throws
     * @throws NullPointerException if the work returns null
     * @throws IllegalArgumentException if the key, TTL or wait is invalid (before any I/O)
     * @throws InterruptedException if interrupted while waiting for the lock
     * @throws FenceGuardException if the backend fails while acquiring
     */
    public <T, E extends Exception> Optional<T> withLock(String key, Duration ttl, Duration maxWait,
            LockedWork<T, E> work) throws E, InterruptedException {
        Objects.requireNonNull(work, "work");
        Optional<Lease> acquired = acquire(key, ttl, maxWait);
        if (acquired.isEmpty()) {
            return Optional.empty();
        }
        Lease lease = acquired.get();
        Thread renewer = Thread.ofVirtual()
                .name("fence-guard-renew-" + lease.lockId().redacted())
                .start(() -> renewUntilStopped(lease));
        try {
            T result = work.run(lease);
            return Optional.of(Objects.requireNonNull(result, "withLock work must not return null"));
        } finally {
            renewer.interrupt();
            closeQuietly(lease);
        }
    }

    /**
     * Releases {@code lease}. Idempotent: only the first call can return true.
     *
     * @return true only if the lease was live on the backend and is now released
     * @throws IllegalArgumentException if the lease came from another client
     * @throws FenceGuardException if the backend fails (the lock then expires at its TTL)
     */
    public boolean release(Lease lease) {
        requireOwn(lease);
        boolean wasHeld = lease.isHeld();
        if (!lease.markReleased()) {
            return false;
        }
        if (wasHeld) {
            metrics.held(backend.name(), Duration.ofNanos(time.nanoTime() - lease.acquiredAtNanos()));
        }
        boolean released = backend.release(lease.key(), lease.lockId());
        log.debug("released lock '{}' fence {} lock {}: {}", lease.key(), lease.fence().value(),
                lease.lockId().redacted(), released ? "was live" : "was not live");
        return released;
    }

    /**
     * Extends a live lease: new backend expiry = backend now + {@code ttl}; same fence. Never revives
     * an expired lease. A false answer marks the lease lost.
     *
     * @return true if the lease was live and is now extended
     * @throws IllegalArgumentException if the lease came from another client or the TTL is invalid
     * @throws FenceGuardException if the backend fails
     */
    public boolean extend(Lease lease, Duration ttl) {
        requireOwn(lease);
        Checks.ttl(ttl, lease.key());
        if (!lease.isHeld()) {
            return false;
        }
        long sent = time.nanoTime();
        Optional<Instant> expiry = backend.extend(lease.key(), lease.lockId(), ttl);
        if (expiry.isEmpty()) {
            lease.markLost();
            return false;
        }
        lease.extended(expiry.get(), sent, ttl);
        return true;
    }

    /**
     * The fence and expiry of the live lease on {@code key}, if any. For diagnostics: the answer may
     * be out of date by the time it arrives.
     *
     * @throws IllegalArgumentException if the key is invalid (before any I/O)
     * @throws FenceGuardException if the backend fails
     */
    public Optional<LockInfo> lookup(String key) {
        return backend.lookup(LockKey.of(key));
    }

    TimeSource timeSource() {
        return time;
    }

    void closeQuietly(Lease lease) {
        try {
            release(lease);
        } catch (RuntimeException e) {
            log.warn("releasing lock '{}' (lock {}) failed; it will expire at its TTL: {}",
                    lease.key(), lease.lockId().redacted(), Redacted.describe(e));
            notify(() -> listener.onReleaseFailed(lease, e));
        }
    }

    private Optional<Lease> acquire(LockKey key, Duration ttl, Duration maxWait) throws InterruptedException {
        long start = time.nanoTime();
        long budget = maxWait.toNanos();
        for (int attempt = 0; ; attempt++) {
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while acquiring lock '" + key + "'");
            }
            Optional<Lease> lease = attempt(key, ttl);
            if (lease.isPresent()) {
                return lease;
            }
            long left = budget - (time.nanoTime() - start);
            if (left <= 0) {
                return Optional.empty();
            }
            long delay = backoff.delay(attempt, ThreadLocalRandom.current().nextDouble()).toNanos();
            time.sleep(Duration.ofNanos(Math.min(delay, left)));
        }
    }

    private Optional<Lease> attempt(LockKey key, Duration ttl) {
        LockId lockId = LockId.random();
        long sent = time.nanoTime();
        Optional<Grant> grant;
        try {
            grant = backend.tryAcquire(key, lockId, ttl);
        } catch (RuntimeException e) {
            metrics.acquireAttempt(backend.name(), LockMetrics.AcquireOutcome.ERROR, Duration.ofNanos(time.nanoTime() - sent));
            throw e;
        }
        Duration latency = Duration.ofNanos(time.nanoTime() - sent);
        if (grant.isEmpty()) {
            metrics.acquireAttempt(backend.name(), LockMetrics.AcquireOutcome.HELD, latency);
            return Optional.empty();
        }
        long fence = grant.get().fence();
        if (fence < FenceToken.MIN_VALUE || fence > FenceToken.MAX_VALUE) {
            // A conforming backend refuses atomically; this is the belt to its braces.
            metrics.acquireAttempt(backend.name(), LockMetrics.AcquireOutcome.ERROR, latency);
            try {
                backend.release(key, lockId);
            } catch (RuntimeException e) {
                log.warn("could not release lock '{}' after an out-of-range fence: {}", key, Redacted.describe(e));
            }
            throw fence > FenceToken.MAX_VALUE
                    ? new FenceGuardException(ErrorCode.FENCE_EXHAUSTED, key.value(), "backend " + backend.name()
                            + " issued fence " + fence + ", above the maximum " + FenceToken.MAX_VALUE)
                    : new FenceGuardException(ErrorCode.INTERNAL, key.value(), "backend " + backend.name()
                            + " issued fence " + fence + ", below the minimum " + FenceToken.MIN_VALUE);
        }
        metrics.acquireAttempt(backend.name(), LockMetrics.AcquireOutcome.ACQUIRED, latency);
        if (fence > FenceToken.WARN_THRESHOLD) {
            metrics.highFence(backend.name());
            warnOnce(key, fence);
        }
        Lease lease = new Lease(this, key, lockId, FenceToken.of(fence), ttl, grant.get().expiresAt(), sent);
        log.debug("acquired lock '{}' fence {} lock {} until {}", key, fence, lockId.redacted(), lease.expiresAt());
        return Optional.of(lease);
    }

    private void renewUntilStopped(Lease lease) {
        Duration ttl = lease.ttl();
        Duration period = ttl.dividedBy(3).compareTo(Duration.ofMillis(1)) < 0 ? Duration.ofMillis(1) : ttl.dividedBy(3);
        while (lease.isHeld()) {
            try {
                time.sleep(period);
            } catch (InterruptedException e) {
                return; // the work finished
            }
            if (!lease.isHeld()) {
                return;
            }
            try {
                long sent = time.nanoTime();
                Optional<Instant> expiry = backend.extend(lease.key(), lease.lockId(), ttl);
                if (expiry.isEmpty()) {
                    lost(lease, null);
                    return;
                }
                lease.extended(expiry.get(), sent, ttl);
            } catch (RuntimeException e) {
                metrics.renewFailed(backend.name());
                log.warn("renewing lock '{}' (lock {}) failed: {}", lease.key(), lease.lockId().redacted(), Redacted.describe(e));
                notify(() -> listener.onRenewFailed(lease, e));
                if (!lease.isValid()) {
                    lost(lease, e);
                    return;
                }
            }
        }
    }

    private void lost(Lease lease, Throwable cause) {
        if (!lease.markLost()) {
            return; // released meanwhile: nothing was lost
        }
        metrics.renewFailed(backend.name());
        metrics.held(backend.name(), Duration.ofNanos(time.nanoTime() - lease.acquiredAtNanos()));
        log.warn("lost lock '{}' fence {} (lock {}): {}", lease.key(), lease.fence().value(), lease.lockId().redacted(),
                cause == null ? "the backend no longer holds it" : "renewal failed until the lease ran out: " + Redacted.describe(cause));
        notify(() -> listener.onLeaseLost(lease, cause));
    }

    private void requireOwn(Lease lease) {
        Objects.requireNonNull(lease, "lease");
        if (lease.client() != this) {
            throw new IllegalArgumentException("lease " + lease + " was issued by another LockClient");
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

    private static void notify(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            log.warn("LockListener threw; ignored", e);
        }
    }

    /**
     * Options for a {@link LockClient}. Not thread-safe; {@link #build()} copies the settings, so a
     * builder can be reused.
     */
    public static final class Builder {
        private final LockBackend backend;
        private TimeSource time = TimeSource.system();
        private LockListener listener = new LockListener() {};
        private LockMetrics metrics;
        private Backoff backoff = new Backoff(Duration.ofMillis(10), Duration.ofSeconds(1));

        private Builder(LockBackend backend) {
            this.backend = Objects.requireNonNull(backend, "backend");
        }

        /** The clock for local deadlines, backoff and renewal; default {@link TimeSource#system()}. */
        public Builder withTimeSource(TimeSource time) {
            this.time = Objects.requireNonNull(time, "time");
            return this;
        }

        /** Told about lease loss and failed renewals or releases; default: nothing (they are logged). */
        public Builder onEvents(LockListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** Where to report metrics; default {@link LockMetrics#automatic()}. */
        public Builder withMetrics(LockMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /**
         * Retry delays of {@link #acquire}: before retry n, a random wait in [0, min(max, initial * 2^n)].
         * Default 10 ms and 1 s.
         *
         * @throws IllegalArgumentException if {@code initial} is not positive or {@code max < initial}
         */
        public Builder withBackoff(Duration initial, Duration max) {
            this.backoff = new Backoff(Objects.requireNonNull(initial, "initial"), Objects.requireNonNull(max, "max"));
            return this;
        }

        /** A new client with these settings. */
        public LockClient build() {
            Builder copy = new Builder(backend);
            copy.time = time;
            copy.listener = listener;
            copy.metrics = metrics != null ? metrics : LockMetrics.automatic();
            copy.backoff = backoff;
            return new LockClient(copy);
        }
    }
}
