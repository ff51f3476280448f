package dev.fenceguard.core;

import dev.fenceguard.core.internal.Backoff;
import dev.fenceguard.core.internal.CallerThread;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.internal.WarmUps;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.util.Collection;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The lock client: takes, renews and releases leases on a {@link LockBackend} and hands out their
 * fences.
 *
 * <p>A lock is a lease: it can expire while its holder is paused (GC, swap, a slow network), and the
 * paused holder cannot know. The fence each lease carries lets the <em>resource</em> refuse that
 * zombie's writes; pass {@link Lease#fence()} to a fenced-write helper on every write.
 *
 * <pre>{@code
 * LockClient locks = LockClient.builder(FenceGuardJdbc.builder(dataSource).build().lockBackend()).build();
 * locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease ->
 *         orders.on(dataSource).update(42L, lease.fence(), Assignments.of("status", "paid")).orThrow());
 * }</pre>
 *
 * <p>Validation happens before any I/O: keys must satisfy {@link LockKey}, TTLs must be whole
 * milliseconds from 1 ms to 30 days, waits must not be negative. Instances are immutable and
 * thread-safe; build one per backend and share it.
 *
 * <p>This is the blocking face of an {@link AsyncLockClient} ({@link #async()}): every method waits on
 * the same non-blocking path, so validation, deadlines, backoff, renewal, metrics and logging exist
 * once. Every backend call is bounded: acquire and lookup by the call timeout
 * ({@link Builder#withCallTimeout}), renewals by the time the lease has left, releases by the release
 * timeout ({@link Builder#withReleaseTimeout}). A lease is not tied to a thread: acquire it on one
 * thread, extend or release it on another. A backend whose driver blocks (the JDBC ones) runs the call a
 * method here waits for on the calling platform thread, which would only wait for it, instead of handing
 * it to its executor; the bounds are the same (docs/postgresql.md, "Threads and time bounds").
 *
 * <p><b>Interrupts.</b> {@link #acquire}, {@link #acquireAll} and {@link #withLock} throw
 * {@link InterruptedException} if the thread is interrupted while they wait for the lock; no lease is
 * held then (a grant that arrives later is released). The other methods cannot throw it: an interrupt
 * does not end their wait, which their own bound ends (the call, release or renewal timeout above), so
 * they return or throw what the backend really answered, never a {@code TIMEOUT} it did not cause; the
 * thread's interrupt status is set again when they return.
 *
 * @since 0.1
 */
public final class LockClient {

    private final AsyncLockClient async;

    private LockClient(AsyncLockClient async) {
        this.async = async;
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

    /** The non-blocking face of this client: same settings, same leases, same renewer. */
    public AsyncLockClient async() {
        return async;
    }

    /** The backend this client talks to. */
    public LockBackend backend() {
        return async.backend();
    }

    /**
     * Gets this client and its backend ready for the first real call; run it at startup, so that the
     * first request does not pay for loading classes, connecting, loading scripts or preparing
     * statements. Takes no lock a user key can name and leaves nothing behind; see
     * {@link AsyncLockClient#warmUp()} (which runs five rounds) and the backend's documentation.
     * Idempotent; each round bounded by the call timeout.
     *
     * @throws FenceGuardException if the backend fails ({@code UNAVAILABLE} when the server cannot be
     *     reached) or is not ready within the call timeout ({@code TIMEOUT})
     * @since 0.1
     */
    public void warmUp() {
        // The blocking face's own code, on the in-memory backend of the asynchronous face's dry run.
        for (int i = 0; i < WarmUps.ROUNDS; i++) {
            LockClient dry = new LockClient(async.dryRun());
            dry.tryAcquire(AsyncLockClient.WARM_UP, AsyncLockClient.DRY_TTL).ifPresent(lease -> {
                dry.extend(lease, AsyncLockClient.DRY_TTL);
                lease.close();
            });
            dry.lookup(AsyncLockClient.WARM_UP);
        }
        // Lent, so that the first round runs the backend's part on this thread, as the blocking face's real calls
        // will (CallerThread); the later rounds take the executor's path, as the asynchronous face's calls will.
        Calls.awaitUninterruptibly(CallerThread.lend(async::warmUp));
    }

    /**
     * One attempt to take the lock on {@code key}, without waiting.
     *
     * @param key the lock key (see {@link LockKey})
     * @param ttl the lease duration: whole milliseconds, 1 ms .. 30 days
     * @return the lease, or empty if another live lease holds the key, or if the grant came back after the
     *     TTL had run out since the request was sent (a lease is handed out only while it is
     *     {@linkplain Lease#isValid() valid}; such a grant is released)
     * @throws IllegalArgumentException if the key or TTL is invalid (before any I/O)
     * @throws FenceGuardException if the backend fails or does not answer within the call timeout, or
     *     {@code FENCE_EXHAUSTED} if the key has used up its fences (no lock is left behind)
     */
    public Optional<Lease> tryAcquire(String key, Duration ttl) {
        LockKey lockKey = LockKey.of(key);
        Duration checked = Checks.ttl(ttl, lockKey);
        return Calls.awaitUninterruptibly(CallerThread.lend(() -> async.tryOnce(lockKey, checked)));
    }

    /**
     * Takes the lock on {@code key}, retrying with exponential backoff and full jitter for up to
     * {@code maxWait}. A grant that comes back after the TTL has run out since its request was sent is
     * released and counts as a refusal: a lease is handed out only while it is {@linkplain Lease#isValid() valid}.
     *
     * @param maxWait how long to keep trying; {@link Duration#ZERO} means one attempt
     * @return the lease, or empty if the key stayed held for {@code maxWait}
     * @throws IllegalArgumentException if the key, TTL or wait is invalid (before any I/O)
     * @throws InterruptedException if interrupted while waiting; no lease is held then (a grant that
     *     arrives afterwards is released)
     * @throws FenceGuardException if the backend fails
     */
    public Optional<Lease> acquire(String key, Duration ttl, Duration maxWait) throws InterruptedException {
        LockKey lockKey = LockKey.of(key);
        Duration checkedTtl = Checks.ttl(ttl, lockKey);
        Duration checkedWait = Checks.maxWait(maxWait, lockKey);
        return awaitAcquired(() -> async.acquire(lockKey, checkedTtl, checkedWait, null));
    }

    /**
     * Takes every lock in {@code keys}, in the global {@link LockKey} order (so two callers wanting
     * overlapping sets cannot deadlock), all or nothing: if any key cannot be had within
     * {@code maxWait} (shared by all keys) or a backend call fails, every lease taken so far is
     * released. Duplicate keys are taken once. The keys are taken one after the other, in a loop (any
     * number of keys, no stack per key). Every lease is still {@linkplain Lease#isValid() valid} when the set
     * is handed out: if the first ran out while the last were taken (a wait longer than the TTL), all are
     * released and the answer is empty.
     *
     * @return the leases, or empty if some key stayed held
     * @throws IllegalArgumentException if {@code keys} is empty or any key, the TTL or the wait is invalid
     *     (before any I/O)
     * @throws InterruptedException if interrupted while waiting; no lease is held then
     * @throws FenceGuardException if the backend fails; no lease is held then
     */
    public Optional<LeaseSet> acquireAll(Collection<String> keys, Duration ttl, Duration maxWait)
            throws InterruptedException {
        return Calls.await(async.acquireAll(keys, ttl, maxWait).toCompletableFuture());
    }

    /**
     * Runs {@code work} while holding the lock on {@code key}: acquires it (waiting up to
     * {@code maxWait}), passes the lease to the work, renews it in the background (timer tasks, no thread
     * per lease) each time a third of the time it has left has passed, so a lease whose acquire waited is
     * renewed early, and releases it when the work ends, however it ends.
     *
     * <p>If a renewal finds the lease gone, or no renewal succeeds before the lease's local deadline
     * (the backend hangs, say), the lease is marked lost at that deadline ({@link Lease#isValid()} and
     * {@link Lease#isLost()}) and the {@link LockListener} is told, whatever the hung call does later.
     * The work is not interrupted: it should check {@code isValid()} between steps, and its writes,
     * which carry the fence, are refused by any resource that has seen a newer lease. The final release
     * waits at most the release timeout, then leaves the lock to expire.
     *
     * <p>While the work runs, its lease is in this thread's {@link LockContext} (so code it calls can
     * assert {@link LockContext#requireHeld}) and the {@code withLock} observation is this thread's
     * current one (so fenced writes are observed as its children); see {@link LockObservations}.
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
        LockKey lockKey = LockKey.of(key);
        Checks.ttl(ttl, lockKey);
        Checks.maxWait(maxWait, lockKey);
        WithLockRun run = new WithLockRun(async, lockKey);
        Optional<Lease> acquired;
        try {
            acquired = awaitAcquired(() -> run.acquire(ttl, maxWait));
        } catch (InterruptedException | RuntimeException | Error e) {
            run.acquireFailed(e);
            throw e;
        }
        if (acquired.isEmpty()) {
            run.notAcquired();
            return Optional.empty();
        }
        Lease lease = acquired.get();
        Throwable failure = null;
        try (LockObservations.Scope scope = run.enter(lease)) {
            T result = work.run(lease);
            return Optional.of(Objects.requireNonNull(result, "withLock work must not return null"));
        } catch (Throwable t) {
            failure = t;
            throw t;
        } finally {
            async.closeQuietly(lease);
            run.workEnded(failure);
        }
    }

    /**
     * Waits for an acquisition whose first attempt may run on this thread ({@link CallerThread}). An interrupt
     * cannot end that attempt (a platform thread's socket read ignores it), so one that came meanwhile is
     * honoured once it returns, as one that came while waiting: the acquisition is cancelled, a lease it
     * already has is released (before this throws), and {@link InterruptedException} is thrown.
     */
    private Optional<Lease> awaitAcquired(Supplier<CompletableFuture<Optional<Lease>>> start) throws InterruptedException {
        boolean interruptedBefore = Thread.currentThread().isInterrupted();
        CompletableFuture<Optional<Lease>> acquiring = CallerThread.lend(start);
        if (!interruptedBefore && Thread.interrupted()) {
            if (!acquiring.cancel(false) && !acquiring.isCompletedExceptionally()) {
                acquiring.join().ifPresent(async::closeQuietly);
            }
            throw new InterruptedException("interrupted while acquiring; no lease is held");
        }
        return Calls.await(acquiring);
    }

    /**
     * Releases {@code lease}. Idempotent: only the first call can return true. Waits at most the
     * release timeout.
     *
     * @return true only if the lease was live on the backend and is now released
     * @throws IllegalArgumentException if the lease came from another client
     * @throws FenceGuardException if the backend fails or does not answer in time (the lock then
     *     expires at its TTL)
     */
    public boolean release(Lease lease) {
        return Calls.awaitUninterruptibly(CallerThread.lend(() -> async.release(lease)));
    }

    /**
     * Extends a live lease: new backend expiry = backend now + {@code ttl}; same fence. Never revives
     * an expired lease. The call is bounded by the time the lease has left. A false answer marks the
     * lease lost and tells the listener.
     *
     * @return true if the lease was live and is now extended
     * @throws IllegalArgumentException if the lease came from another client or the TTL is invalid
     * @throws FenceGuardException if the backend fails or does not answer before the lease's deadline
     */
    public boolean extend(Lease lease, Duration ttl) {
        return Calls.awaitUninterruptibly(CallerThread.lend(() -> async.extend(lease, ttl)));
    }

    /**
     * The fence and expiry of the live lease on {@code key}, if any. For diagnostics: the answer may
     * be out of date by the time it arrives.
     *
     * @throws IllegalArgumentException if the key is invalid (before any I/O)
     * @throws FenceGuardException if the backend fails
     */
    public Optional<LockInfo> lookup(String key) {
        return Calls.awaitUninterruptibly(CallerThread.lend(() -> async.lookup(key)));
    }

    /**
     * Options for a {@link LockClient}. Not thread-safe; {@link #build()} copies the settings, so a
     * builder can be reused.
     */
    public static final class Builder {
        private final LockBackend backend;
        private TimeSource time = TimeSource.system();
        private LockListener listener = LockEvents.NO_LISTENER;
        private LockMetrics metrics;
        private LockObservations observations = LockObservations.none();
        private Backoff backoff = new Backoff(Duration.ofMillis(10), Duration.ofSeconds(1));
        private Duration callTimeout = Duration.ofSeconds(10);
        private Duration releaseTimeout = Duration.ofSeconds(2);

        private Builder(LockBackend backend) {
            this.backend = Objects.requireNonNull(backend, "backend");
        }

        /** The clock for local deadlines, backoff, renewal and call timeouts; default {@link TimeSource#system()}. */
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
         * Where to report observations (traces) of acquire, {@code withLock}, renewal and release; default
         * {@link LockObservations#none()}, which costs nothing. For Micrometer:
         * {@code withObservations(MicrometerLockObservations.of(observationRegistry))}.
         *
         * @throws NullPointerException if {@code observations} is null
         * @since 0.1
         */
        public Builder withObservations(LockObservations observations) {
            this.observations = Objects.requireNonNull(observations, "observations");
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

        /**
         * How long one acquire or lookup call may take before it fails with {@code TIMEOUT} (a grant
         * that arrives later is released). Default 10 s.
         *
         * @throws IllegalArgumentException if not between 1 ms and 10 minutes
         */
        public Builder withCallTimeout(Duration timeout) {
            this.callTimeout = checkTimeout("callTimeout", timeout);
            return this;
        }

        /**
         * How long a release may take before fence-guard gives up and leaves the lock to expire at its
         * TTL: the bound on {@link Lease#close()} and on the end of {@link LockClient#withLock}. Default 2 s.
         *
         * @throws IllegalArgumentException if not between 1 ms and 10 minutes
         */
        public Builder withReleaseTimeout(Duration timeout) {
            this.releaseTimeout = checkTimeout("releaseTimeout", timeout);
            return this;
        }

        private static Duration checkTimeout(String name, Duration timeout) {
            Objects.requireNonNull(timeout, name);
            if (timeout.compareTo(Duration.ofMillis(1)) < 0 || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
                throw new IllegalArgumentException(name + " must be between 1 ms and 10 minutes, was " + timeout);
            }
            return timeout;
        }

        /** A new client with these settings. */
        public LockClient build() {
            return new LockClient(new AsyncLockClient(backend, time, listener, metrics != null ? metrics : LockMetrics.automatic(),
                    observations, backoff, callTimeout, releaseTimeout));
        }
    }
}
