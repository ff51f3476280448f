package dev.fenceguard.core;

import dev.fenceguard.core.internal.Backoff;
import dev.fenceguard.core.internal.CallerThread;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.internal.EventPublisher;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.internal.Redacted;
import dev.fenceguard.core.internal.WarmUps;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The non-blocking face of a {@link LockClient}: the same operations, each returning a
 * {@link CompletionStage} at once. No thread waits for a lock: retries are scheduled on a timer, every
 * backend call is bounded by a timeout, and renewal needs no thread per lease. Get one with
 * {@link LockClient#async()}; both faces share settings, leases and the renewer, and the blocking one
 * is a thin wait on this one.
 *
 * <pre>{@code
 * AsyncLockClient locks = LockClient.builder(backend).build().async();
 * CompletionStage<WriteOutcome> paid = locks.withLock("orders:" + orderId, Duration.ofSeconds(30), Duration.ofSeconds(5),
 *                 lease -> redis.async().set("order:" + orderId + ":status", lease.fence(), "paid"))
 *         .thenApply(outcome -> outcome.orElseThrow().orThrow());   // empty: not had within 5 s; Stale: refused
 * }</pre>
 *
 * <p>Invalid arguments throw {@link IllegalArgumentException} (or {@link NullPointerException}) at
 * once, before any I/O, rather than failing the stage. Backend failures complete the stage with a
 * {@link FenceGuardException}. Cancelling a stage returned by an acquire leaves no lock behind: a
 * grant that arrives after the cancel is released. Dependent actions you attach may run on
 * fence-guard's timer thread or a driver's thread: attach blocking work with the {@code *Async}
 * methods of {@link CompletionStage}. Kotlin coroutines can {@code await()} these stages.
 * Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class AsyncLockClient {

    private static final Logger log = LoggerFactory.getLogger(LockClient.class);
    static final String WARM_UP = "warm-up";
    static final Duration DRY_TTL = Duration.ofSeconds(1);

    private final LockBackend backend;
    private final TimeSource time;
    /** Where every lock event goes: meters, log, listener, withLock runs and whenLost subscribe there. */
    private final EventPublisher<LockEvent> events;
    private final LockObservations observations;
    private final Backoff backoff;
    private final Duration callTimeout;
    private final Duration releaseTimeout;
    private final LeaseRenewer renewer;

    AsyncLockClient(LockBackend backend, TimeSource time, LockListener listener, LockMetrics metrics,
            LockObservations observations, Backoff backoff, Duration callTimeout, Duration releaseTimeout) {
        this.backend = backend;
        this.time = time;
        this.events = LockEvents.publisher(backend.name(), metrics, listener);
        this.observations = observations;
        this.backoff = backoff;
        this.callTimeout = callTimeout;
        this.releaseTimeout = releaseTimeout;
        this.renewer = new LeaseRenewer(backend, time, events, observations, releaseTimeout);
    }

    /** The backend this client talks to. */
    public LockBackend backend() {
        return backend;
    }

    /**
     * Gets this client and its backend ready for the first real call, so that a service pays the
     * first-call costs at startup instead of in its first request: the client runs each of its
     * operations once on a private in-memory backend (so its classes are loaded and its code linked,
     * with nothing measured or observed), then the backend connects, loads its scripts and prepares its
     * statements ({@link LockBackend#warmUp}). Takes no lock a user key can name and leaves nothing
     * behind; each backend's documentation says what it sends. All of this runs five times in a
     * row: the later runs take part of what one run leaves to the first real call (on PostgreSQL,
     * pgjdbc's switch to server-side prepared statements at a statement's fifth run on a connection).
     * Idempotent; safe to call while other calls run. Each run of the backend's part is bounded by the
     * call timeout; the first failure ends the warm-up.
     *
     * @return a stage that completes when the backend is ready; it fails with a
     *     {@link FenceGuardException} ({@code UNAVAILABLE} if the server cannot be reached,
     *     {@code TIMEOUT} after the call timeout, ...)
     * @since 0.1
     */
    public CompletionStage<Void> warmUp() {
        return WarmUps.rounds(CompletableFuture.completedFuture(null), this::warmUpRound);
    }

    /** One round of {@link #warmUp()}: the dry run, then the backend's warm-up. */
    private CompletionStage<Void> warmUpRound() {
        AsyncLockClient dry = dryRun();
        return dry.tryAcquire(WARM_UP, DRY_TTL)
                .thenCompose(lease -> dry.extend(lease.orElseThrow(), DRY_TTL).thenCompose(extended -> dry.release(lease.get())))
                .thenCompose(released -> dry.acquire(WARM_UP, DRY_TTL, DRY_TTL))
                .thenCompose(lease -> dry.release(lease.orElseThrow()))
                .thenCompose(released -> dry.lookup(WARM_UP))
                .thenCompose(info -> Calls.bounded(time, callTimeout, (String) null, WARM_UP + " of backend " + backend.name(),
                        () -> backend.warmUp(callTimeout), null));
    }

    /**
     * This client's settings over an in-memory backend of its own, measuring, observing and telling
     * nothing: running each operation there once, before the first real call, is what takes the first
     * call's own costs away from it (seeding {@code SecureRandom}, loading classes, and linking each
     * lambda and string concatenation on its first use, which together cost a first acquisition in a
     * fresh JVM more than the round trip).
     */
    AsyncLockClient dryRun() {
        return new AsyncLockClient(new InMemoryLockBackend(time), time, LockEvents.NO_LISTENER, LockMetrics.none(),
                LockObservations.none(), backoff, callTimeout, releaseTimeout);
    }

    /**
     * One attempt to take the lock on {@code key}, without waiting.
     *
     * @return a stage of the lease, or of empty if another live lease holds the key, or if the grant came
     *     back after the TTL had run out since the request was sent (a lease is handed out only while it is
     *     {@linkplain Lease#isValid() valid}; such a grant is released); it fails with a
     *     {@link FenceGuardException} if the backend fails or does not answer within the call timeout
     * @throws IllegalArgumentException if the key or TTL is invalid (before any I/O)
     */
    public CompletionStage<Optional<Lease>> tryAcquire(String key, Duration ttl) {
        LockKey lockKey = LockKey.of(key);
        return tryOnce(lockKey, Checks.ttl(ttl, lockKey));
    }

    /**
     * Takes the lock on {@code key}, retrying with exponential backoff and full jitter for up to
     * {@code maxWait}. Retries are timer tasks: no thread waits in between. A grant that comes back after
     * the TTL has run out since its request was sent is released and counts as a refusal.
     *
     * @return a stage of the lease, or of empty if the key stayed held for {@code maxWait}
     * @throws IllegalArgumentException if the key, TTL or wait is invalid (before any I/O)
     */
    public CompletionStage<Optional<Lease>> acquire(String key, Duration ttl, Duration maxWait) {
        LockKey lockKey = LockKey.of(key);
        return acquire(lockKey, Checks.ttl(ttl, lockKey), Checks.maxWait(maxWait, lockKey), null);
    }

    /**
     * Takes every lock in {@code keys} in the global {@link LockKey} order, all or nothing, within one
     * shared {@code maxWait}; see {@link LockClient#acquireAll}.
     *
     * @throws IllegalArgumentException if {@code keys} is empty or any key, the TTL or the wait is invalid
     */
    public CompletionStage<Optional<LeaseSet>> acquireAll(Collection<String> keys, Duration ttl, Duration maxWait) {
        Objects.requireNonNull(keys, "keys");
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("acquireAll needs at least one key");
        }
        List<LockKey> ordered = keys.stream().map(LockKey::of).distinct().sorted().toList();
        Checks.ttl(ttl, ordered.getFirst());
        Checks.maxWait(maxWait, ordered.getFirst());
        CompletableFuture<Optional<LeaseSet>> out = new CompletableFuture<>();
        new TakeAll(ordered, ttl, time.nanoTime() + maxWait.toNanos(), out).drive();
        return out;
    }

    /**
     * One {@code acquireAll}: takes the keys one after the other, in a loop rather than a callback per key (a
     * chain of callbacks as long as the key list overflowed the stack when acquires completed at once). The loop
     * runs on whichever thread completes an acquire, one thread at a time: an acquire that completed at once is
     * taken up by the same pass of the loop; one that completes later starts a new pass from its callback. Any
     * failure, and a cancel, releases every lease taken so far.
     */
    private final class TakeAll {
        private final List<LockKey> keys;
        private final Duration ttl;
        private final long deadline;
        private final CompletableFuture<Optional<LeaseSet>> out;
        private final List<Lease> taken = new ArrayList<>();
        /** Passes asked for and not yet run; the pass that raises it from 0 runs them all. */
        private final AtomicInteger passes = new AtomicInteger();
        /** The acquire in flight; volatile for a cancel of {@code out} on another thread. */
        private volatile CompletableFuture<Optional<Lease>> pending;
        private int next;
        private boolean finished;

        TakeAll(List<LockKey> keys, Duration ttl, long deadline, CompletableFuture<Optional<LeaseSet>> out) {
            this.keys = keys;
            this.ttl = ttl;
            this.deadline = deadline;
            this.out = out;
            out.whenComplete((v, e) -> {
                CompletableFuture<Optional<Lease>> inFlight = pending;
                if (out.isCancelled() && inFlight != null) {
                    inFlight.cancel(false); // the acquire releases a grant that arrives after this
                }
                drive();
            });
        }

        void drive() {
            if (passes.getAndIncrement() != 0) {
                return;
            }
            int missed = 1;
            do {
                try {
                    step();
                } catch (RuntimeException | Error e) {
                    finish(null, e);
                }
                missed = passes.addAndGet(-missed);
            } while (missed != 0);
        }

        /** Runs until an acquire is in flight or all is over. */
        private void step() {
            while (!finished) {
                CompletableFuture<Optional<Lease>> inFlight = pending;
                if (inFlight != null) {
                    if (!inFlight.isDone()) {
                        return; // its callback starts the next pass
                    }
                    pending = null;
                    Optional<Lease> lease;
                    try {
                        lease = inFlight.join();
                    } catch (CancellationException | CompletionException e) {
                        finish(null, Calls.unwrap(e));
                        return;
                    }
                    if (lease.isEmpty()) {
                        log.debug("acquireAll gave up at key '{}' after taking {} of {} keys", keys.get(next - 1), taken.size(),
                                keys.size());
                        finish(Optional.empty(), null);
                        return;
                    }
                    taken.add(lease.get());
                    continue;
                }
                if (out.isDone()) {
                    finish(null, null); // cancelled
                    return;
                }
                if (next == keys.size()) {
                    // Every lease must still be valid when the set is handed out: the first may have run out while
                    // the last were taken.
                    finish(taken.stream().allMatch(Lease::isValid) ? Optional.of(new LeaseSet(taken)) : Optional.empty(), null);
                    return;
                }
                Duration left = Duration.ofNanos(Math.max(0, deadline - time.nanoTime()));
                CompletableFuture<Optional<Lease>> acquiring = acquire(keys.get(next++), ttl, left, null);
                pending = acquiring;
                acquiring.whenComplete((lease, error) -> drive());
            }
        }

        /** Ends with {@code result} or {@code error}; releases what was taken unless the set was handed out. */
        private void finish(Optional<LeaseSet> result, Throwable error) {
            if (finished) {
                return;
            }
            finished = true;
            boolean handedOut = result != null && result.isPresent() && out.complete(result);
            if (!handedOut) {
                releaseAllQuietly(taken);
                if (error != null) {
                    out.completeExceptionally(error);
                } else if (result != null) {
                    out.complete(Optional.empty());
                }
            }
        }
    }

    /**
     * Releases {@code taken} newest first, one after the other, without waiting for them; failures go to the log
     * and the listener. One at a time, because thousands sent at once would queue for the backend's connections
     * past the release timeout and leave their keys locked for a TTL.
     */
    private void releaseAllQuietly(List<Lease> taken) {
        new ReleaseInTurn(List.copyOf(taken)).drive();
    }

    /** The releases of {@link #releaseAllQuietly}, in a loop like {@link TakeAll}'s: no callback chain per lease. */
    private final class ReleaseInTurn {
        private final List<Lease> leases;
        private final AtomicInteger passes = new AtomicInteger();
        private volatile CompletableFuture<Boolean> pending;
        private int next;

        ReleaseInTurn(List<Lease> leases) {
            this.leases = leases;
            this.next = leases.size() - 1;
        }

        void drive() {
            if (passes.getAndIncrement() != 0) {
                return;
            }
            int missed = 1;
            do {
                while (next >= 0 && (pending == null || pending.isDone())) {
                    Lease lease = leases.get(next--);
                    CompletableFuture<Boolean> releasing;
                    try {
                        releasing = releaseInternal(lease);
                    } catch (RuntimeException e) {
                        releasing = CompletableFuture.failedFuture(e);
                    }
                    pending = releasing;
                    releasing.whenComplete((released, error) -> {
                        if (error != null) {
                            reportReleaseFailure(lease, Calls.unwrap(error));
                        }
                        drive();
                    });
                }
                missed = passes.addAndGet(-missed);
            } while (missed != 0);
        }
    }

    /**
     * Runs {@code work} while holding the lock on {@code key}: acquires it (waiting up to
     * {@code maxWait}), passes the lease to the work, renews the lease while the work's stage is
     * pending, and releases it when that stage completes normally, exceptionally or is cancelled.
     * Cancelling the returned stage cancels the work's stage and releases the lease. Loss is reported as
     * for {@link LockClient#withLock}.
     *
     * <p>While {@code work} runs to create its stage (and only then), the lease is in the calling
     * thread's {@link LockContext} and the {@code withLock} observation is current; stages completing
     * later on other threads see neither.
     *
     * @param work starts the work; must not return null
     * @return a stage of the work's result, or of empty if the lock could not be had within {@code maxWait}
     * @throws IllegalArgumentException if the key, TTL or wait is invalid (before any I/O)
     */
    public <T> CompletionStage<Optional<T>> withLock(String key, Duration ttl, Duration maxWait,
            Function<? super Lease, ? extends CompletionStage<T>> work) {
        Objects.requireNonNull(work, "work");
        LockKey lockKey = LockKey.of(key);
        Checks.ttl(ttl, lockKey);
        Checks.maxWait(maxWait, lockKey);
        CompletableFuture<Optional<T>> out = new CompletableFuture<>();
        WithLockRun run = new WithLockRun(this, lockKey);
        CompletableFuture<Optional<Lease>> acquiring = run.acquire(ttl, maxWait);
        out.whenComplete((v, e) -> {
            if (out.isCancelled()) {
                acquiring.cancel(false);
            }
        });
        acquiring.whenComplete((acquired, error) -> {
            if (error != null) {
                run.acquireFailed(Calls.unwrap(error));
                out.completeExceptionally(Calls.unwrap(error));
                return;
            }
            if (acquired.isEmpty()) {
                run.notAcquired();
                out.complete(Optional.empty());
                return;
            }
            Lease lease = acquired.get();
            CompletableFuture<T> running;
            try (LockObservations.Scope scope = run.enter(lease)) {
                running = Objects.requireNonNull(work.apply(lease), "withLock work must not return a null stage").toCompletableFuture();
            } catch (RuntimeException | Error e) {
                running = CompletableFuture.failedFuture(e);
            }
            CompletableFuture<T> job = running;
            out.whenComplete((v, e) -> {
                if (out.isCancelled()) {
                    job.cancel(true);
                }
            });
            job.whenComplete((value, failure) -> release(lease).handle((released, releaseError) -> {
                if (releaseError != null) {
                    reportReleaseFailure(lease, Calls.unwrap(releaseError));
                }
                Throwable ended = failure != null ? Calls.unwrap(failure)
                        : value == null ? new NullPointerException("withLock work must not complete with null") : null;
                run.workEnded(ended); // before the caller sees the result, so its trace is complete by then
                if (ended != null) {
                    out.completeExceptionally(ended);
                } else {
                    out.complete(Optional.of(value));
                }
                return null;
            }));
        });
        return out;
    }

    /**
     * Releases {@code lease}, waiting at most the release timeout for the backend. Idempotent: only the
     * first call can answer true.
     *
     * @return a stage of true only if the lease was live on the backend and is now released; it fails
     *     with a {@link FenceGuardException} if the backend fails or does not answer in time (the lock
     *     then expires at its TTL)
     * @throws IllegalArgumentException if the lease came from another client
     */
    public CompletionStage<Boolean> release(Lease lease) {
        requireOwn(lease);
        return releaseInternal(lease);
    }

    private CompletableFuture<Boolean> releaseInternal(Lease lease) {
        if (!lease.markReleased()) {
            return CompletableFuture.completedFuture(false);
        }
        renewer.stop(lease);
        if (lease.releasedWhileHeld() && events.hasSubscribers(LockEvent.Released.class)) {
            events.publish(new LockEvent.Released(lease, Duration.ofNanos(time.nanoTime() - lease.acquiredAtNanos())));
        }
        LockObservations.Observed observed = observations.start(LockObservations.Operation.RELEASE, backend.name(),
                lease.key(), lease.parentObservation());
        observed.fence(lease.fence());
        return Calls.bounded(time, releaseTimeout, lease.key(), "release",
                () -> backend.release(lease.key(), lease.lockId(), releaseTimeout), null)
                .whenComplete((released, error) -> {
                    end(observed, error, released == null ? null : released ? "released" : "not_held");
                    if (error == null && log.isDebugEnabled()) { // redacted() hashes: not for a line nobody logs
                        log.debug("released lock '{}' fence {} lock {}: {}", lease.key(), lease.fence().value(),
                                lease.lockId().redacted(), released ? "was live" : "was not live");
                    }
                });
    }

    /**
     * Extends a live lease: backend expiry = backend now + {@code ttl}; same fence; never revives an
     * expired lease. The call is bounded by the time the lease has left. A false answer marks the lease
     * lost and tells the listener, as a failed background renewal does.
     *
     * @return a stage of true if the lease was live and is now extended
     * @throws IllegalArgumentException if the lease came from another client or the TTL is invalid
     */
    public CompletionStage<Boolean> extend(Lease lease, Duration ttl) {
        requireOwn(lease);
        Checks.ttl(ttl, lease.key());
        return renewer.extend(lease, ttl);
    }

    /**
     * The fence and expiry of the live lease on {@code key}, if any. For diagnostics.
     *
     * @throws IllegalArgumentException if the key is invalid (before any I/O)
     */
    public CompletionStage<Optional<LockInfo>> lookup(String key) {
        LockKey lockKey = LockKey.of(key);
        return Calls.bounded(time, callTimeout, lockKey, "lookup", () -> backend.lookup(lockKey, callTimeout), null);
    }

    // --- shared with the blocking face ---

    /** One attempt, observed: {@code tryAcquire} of both faces. */
    CompletableFuture<Optional<Lease>> tryOnce(LockKey key, Duration ttl) {
        LockObservations.Observed observed = observations.start(LockObservations.Operation.ACQUIRE, backend.name(), key, null);
        return observeAcquire(observed, attempt(key, ttl));
    }

    /**
     * {@code acquire} of both faces, and of {@code withLock} (under {@code parent}): retries until
     * {@code maxWait}, observed and timed as one wait.
     */
    CompletableFuture<Optional<Lease>> acquire(LockKey key, Duration ttl, Duration maxWait, LockObservations.Observed parent) {
        LockObservations.Observed observed = observations.start(LockObservations.Operation.ACQUIRE, backend.name(), key, parent);
        CompletableFuture<Optional<Lease>> out = new CompletableFuture<>();
        long start = time.nanoTime();
        tryUntil(key, ttl, start + maxWait.toNanos(), 0, out);
        out.whenComplete((lease, error) -> {
            if (error == null && events.hasSubscribers(LockEvent.AcquireWaited.class)) {
                events.publish(new LockEvent.AcquireWaited(key, Duration.ofNanos(time.nanoTime() - start), lease.isPresent()));
            }
        });
        return observeAcquire(observed, out);
    }

    private static CompletableFuture<Optional<Lease>> observeAcquire(LockObservations.Observed observed,
            CompletableFuture<Optional<Lease>> acquiring) {
        if (observed == NoObservations.INSTANCE) {
            return acquiring; // not observed: not even a callback
        }
        acquiring.whenComplete((lease, error) -> {
            if (error == null && lease.isPresent()) {
                observed.fence(lease.get().fence());
            }
            end(observed, error, lease == null ? null : lease.isPresent() ? "acquired" : "held");
        });
        return acquiring;
    }

    /**
     * Ends {@code observed} with {@code outcome}, or, when {@code error} is set, with {@code cancelled}
     * or {@code error} (recorded redacted: a driver's message may quote data).
     */
    static void end(LockObservations.Observed observed, Throwable error, String outcome) {
        if (error != null) {
            Throwable e = Calls.unwrap(error);
            if (e instanceof CancellationException) {
                observed.outcome("cancelled");
            } else {
                observed.error(Redacted.chain(e, 0));
                observed.outcome("error");
            }
        } else {
            observed.outcome(outcome);
        }
        observed.stop();
    }

    private void tryUntil(LockKey key, Duration ttl, long deadline, int attempt, CompletableFuture<Optional<Lease>> out) {
        if (out.isDone()) {
            return; // cancelled
        }
        attempt(key, ttl).whenComplete((lease, error) -> {
            if (error != null) {
                out.completeExceptionally(Calls.unwrap(error));
                return;
            }
            if (lease.isPresent()) {
                if (!out.complete(lease)) {
                    releaseQuietly(lease.get()); // the caller gave up meanwhile
                }
                return;
            }
            long left = deadline - time.nanoTime();
            if (left <= 0) {
                out.complete(Optional.empty());
                return;
            }
            long delay = backoff.delay(attempt, ThreadLocalRandom.current().nextDouble()).toNanos();
            time.schedule(Duration.ofNanos(Math.min(delay, left)), () -> tryUntil(key, ttl, deadline, attempt + 1, out));
        });
    }

    CompletableFuture<Optional<Lease>> attempt(LockKey key, Duration ttl) {
        LockId lockId = LockId.random();
        long sent = time.nanoTime();
        CompletableFuture<Optional<Grant>> call = Calls.bounded(time, callTimeout, key, "acquire",
                () -> backend.tryAcquire(key, lockId, ttl, callTimeout),
                late -> late.ifPresent(g -> undoGrant(key, lockId)));
        CompletableFuture<Optional<Lease>> out = new CompletableFuture<>();
        call.whenComplete((grant, error) -> {
            Duration latency = Duration.ofNanos(time.nanoTime() - sent);
            if (error != null) {
                events.publish(new LockEvent.AcquireRefused(key, LockMetrics.AcquireOutcome.ERROR, latency));
                out.completeExceptionally(Calls.unwrap(error));
                return;
            }
            if (grant.isEmpty()) {
                if (events.hasSubscribers(LockEvent.AcquireRefused.class)) { // contention: the most frequent event of all
                    events.publish(new LockEvent.AcquireRefused(key, LockMetrics.AcquireOutcome.HELD, latency));
                }
                out.complete(Optional.empty());
                return;
            }
            long fence = grant.get().fence();
            if (fence < FenceToken.MIN_VALUE || fence > FenceToken.MAX_VALUE) {
                // A conforming backend refuses atomically; this is the belt to its braces.
                events.publish(new LockEvent.AcquireRefused(key, LockMetrics.AcquireOutcome.ERROR, latency));
                undoGrant(key, lockId);
                out.completeExceptionally(fence > FenceToken.MAX_VALUE
                        ? new FenceGuardException(ErrorCode.FENCE_EXHAUSTED, key.value(), "backend " + backend.name()
                                + " issued fence " + fence + ", above the maximum " + FenceToken.MAX_VALUE)
                        : new FenceGuardException(ErrorCode.INTERNAL, key.value(), "backend " + backend.name()
                                + " issued fence " + fence + ", below the minimum " + FenceToken.MIN_VALUE));
                return;
            }
            if (latency.compareTo(ttl) >= 0) {
                // The lease's local deadline (sent + ttl) passed before the grant arrived: it is invalid on arrival
                // and the server may already have granted the next fence. Never hand it out; free it, as for a
                // grant nobody waits for, and answer as for a held key (acquire then retries within its wait).
                events.publish(new LockEvent.AcquireRefused(key, LockMetrics.AcquireOutcome.ERROR, latency));
                log.warn("a grant of lock '{}' arrived {} after the acquire was sent, past its TTL of {}; released, not handed out",
                        key, latency, ttl);
                undoGrant(key, lockId);
                out.complete(Optional.empty());
                return;
            }
            Lease lease = new Lease(this, time, key, lockId, FenceToken.of(fence), ttl, grant.get().expiresAt(), sent);
            events.publish(new LockEvent.Granted(lease, latency)); // before anyone has the lease: its first event
            if (!out.complete(Optional.of(lease))) {
                releaseQuietly(lease); // cancelled while the call was out
            }
        });
        return out;
    }

    /** A grant nobody waits for (timed out, cancelled, out of range): free it so it does not block the key for a TTL. */
    private void undoGrant(LockKey key, LockId lockId) {
        Calls.bounded(time, releaseTimeout, key, "release", () -> backend.release(key, lockId, releaseTimeout), null)
                .whenComplete((released, error) -> {
                    if (error != null) {
                        log.warn("could not release an unwanted grant of lock '{}'; it expires at its TTL: {}", key, Redacted.describe(error));
                    }
                });
    }

    LeaseRenewer renewer() {
        return renewer;
    }

    TimeSource timeSource() {
        return time;
    }

    LockObservations observations() {
        return observations;
    }

    Duration releaseTimeout() {
        return releaseTimeout;
    }

    void requireOwn(Lease lease) {
        Objects.requireNonNull(lease, "lease");
        if (lease.owner() != this) {
            throw new IllegalArgumentException("lease " + lease + " was issued by another LockClient");
        }
    }

    /** Releases without waiting for the answer; failures go to the log and the listener. */
    void releaseQuietly(Lease lease) {
        releaseInternal(lease).whenComplete((released, error) -> {
            if (error != null) {
                reportReleaseFailure(lease, Calls.unwrap(error));
            }
        });
    }

    /** {@link Lease#close()}: releases and waits at most the release timeout (the call is bounded by it). */
    void closeQuietly(Lease lease) {
        try {
            Calls.await(CallerThread.lend(() -> releaseInternal(lease)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            reportReleaseFailure(lease, new FenceGuardException(ErrorCode.TIMEOUT, lease.key().value(),
                    "interrupted while releasing", e));
        } catch (RuntimeException e) {
            reportReleaseFailure(lease, e);
        }
    }

    void reportReleaseFailure(Lease lease, Throwable e) {
        events.publish(new LockEvent.ReleaseFailed(lease, e));
    }
}
