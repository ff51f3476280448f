package dev.fenceguard.reactor;

import dev.fenceguard.core.AsyncLockClient;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LeaseSet;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.internal.Redacted;
import dev.fenceguard.reactor.internal.HandOff;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * The {@link Mono} face of a {@link LockClient}, over its {@link AsyncLockClient}: the same operations, each a lazy {@code Mono}
 * that does nothing until subscribed and never blocks a thread. Every Mono is a thin wrapper over the
 * asynchronous client, so validation, call timeouts, backoff, renewal, loss reporting, metrics and
 * logging are the ones of {@link LockClient}; this class adds no lock logic of its own.
 *
 * <pre>{@code
 * ReactiveLockClient locks = ReactiveLockClient.of(LockClient.builder(backend).build());
 *
 * Mono<Order> saved = locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
 *         lease -> orders.save(order.withFence(lease.fence())));   // a Mono<Order>; renewed while it runs
 *
 * Mono<Lease> lease = locks.tryAcquire("reports:daily", Duration.ofMinutes(5));   // empty if held
 * }</pre>
 *
 * <p><b>Absence is emptiness.</b> Where the asynchronous client answers {@code Optional.empty()} (the
 * key is held, the wait ran out, no live lock), the Mono completes empty; combine with
 * {@link Mono#switchIfEmpty} or {@link Mono#defaultIfEmpty}. Backend failures are
 * {@link FenceGuardException} error signals.
 *
 * <p><b>Bad input</b> (an invalid key, TTL or wait, a null) throws {@link IllegalArgumentException} or
 * {@link NullPointerException} when the method is called, before anything is subscribed. A lease that
 * came from another client is refused with an {@code IllegalArgumentException} error signal, also
 * before any I/O.
 *
 * <p><b>Cancellation</b> leaves no lock behind, however it meets the grant. Cancelling an acquire
 * ({@link #tryAcquire}, {@link #acquire}, {@link #acquireAll}) that is waiting stops its retries; a grant
 * that arrives as the subscriber cancels is released, including one handed to a subscriber that had
 * begun to cancel and so dropped it; and a lease already delivered into a chain that is then cancelled
 * (a {@code flatMap} running work with it) is released. A cancel from inside the delivery, as
 * {@code next()} and {@code take(1)} make when they take the value, leaves the lease with the subscriber.
 * So keep a subscription whose lease you keep: cancelling it releases the lease (the standard
 * subscribers, {@code subscribe(...)}, {@code block()} and {@code toFuture()}, never cancel after taking
 * it). Operators that hold values and drop them when cancelled or failed ({@code collectList},
 * {@code buffer}, {@code zip} when another source fails) discard them instead: put
 * {@code .doOnDiscard(Lease.class, lease -> locks.release(lease).subscribe())} below them. Cancelling
 * {@link #withLock} while the work runs cancels the work's Mono and releases the lease.
 *
 * <p><b>Threads.</b> Signals arrive on the thread that completed the backend call: a driver's I/O thread
 * (Lettuce's event loop, gRPC's executor), a JDBC backend's executor or fence-guard's timer thread. Do
 * not block there: move blocking work elsewhere with {@link Mono#publishOn}. Kotlin coroutines can
 * {@code awaitSingleOrNull()} these Monos.
 *
 * <p>Immutable and thread-safe; every Mono may be subscribed any number of times, each subscription
 * being a new operation.
 *
 * @since 0.1
 */
public final class ReactiveLockClient {

    private static final Logger log = LoggerFactory.getLogger(ReactiveLockClient.class);

    private final AsyncLockClient async;

    private ReactiveLockClient(AsyncLockClient async) {
        this.async = async;
    }

    /**
     * The Mono face of {@code locks}; it shares that client's settings, leases and renewer (through its
     * {@linkplain LockClient#async() asynchronous face}).
     *
     * @throws NullPointerException if {@code locks} is null
     * @since 0.1
     */
    public static ReactiveLockClient of(LockClient locks) {
        return new ReactiveLockClient(Objects.requireNonNull(locks, "locks").async());
    }

    /**
     * The asynchronous client this face wraps.
     *
     * @since 0.1
     */
    public AsyncLockClient async() {
        return async;
    }

    /**
     * One attempt to take the lock on {@code key}, without waiting; see {@link LockClient#tryAcquire}.
     *
     * @param key the lock key (see {@link LockKey})
     * @param ttl the lease duration: whole milliseconds, 1 ms .. 30 days
     * @return a Mono of the lease, empty if another live lease holds the key; it fails with a
     *     {@link FenceGuardException} if the backend fails or does not answer within the call timeout
     * @throws IllegalArgumentException if the key or TTL is invalid
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public Mono<Lease> tryAcquire(String key, Duration ttl) {
        LockKey lockKey = LockKey.of(key);
        Checks.ttl(ttl, lockKey);
        return lease(() -> async.tryAcquire(key, ttl));
    }

    /**
     * Takes the lock on {@code key}, retrying with exponential backoff and full jitter for up to
     * {@code maxWait}; see {@link LockClient#acquire}. Retries are timer tasks: no thread waits.
     * Cancelling the subscription stops the retries and releases the lease, whenever the grant arrives
     * (see "Cancellation" above).
     *
     * @param maxWait how long to keep trying; {@link Duration#ZERO} means one attempt
     * @return a Mono of the lease, empty if the key stayed held for {@code maxWait}
     * @throws IllegalArgumentException if the key, TTL or wait is invalid
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public Mono<Lease> acquire(String key, Duration ttl, Duration maxWait) {
        LockKey lockKey = LockKey.of(key);
        Checks.ttl(ttl, lockKey);
        Checks.maxWait(maxWait, lockKey);
        return lease(() -> async.acquire(key, ttl, maxWait));
    }

    /**
     * Takes every lock in {@code keys} in the global {@link LockKey} order, all or nothing, within one
     * shared {@code maxWait}; see {@link LockClient#acquireAll}. Release the set with
     * {@link #release(LeaseSet)} ({@link LeaseSet#close()} waits on the calling thread).
     *
     * @return a Mono of the leases, empty if some key stayed held (nothing is held then)
     * @throws IllegalArgumentException if {@code keys} is empty or any key, the TTL or the wait is invalid
     * @throws NullPointerException if an argument or a key is null
     * @since 0.1
     */
    public Mono<LeaseSet> acquireAll(Collection<String> keys, Duration ttl, Duration maxWait) {
        List<String> copy = List.copyOf(Objects.requireNonNull(keys, "keys"));
        if (copy.isEmpty()) {
            throw new IllegalArgumentException("acquireAll needs at least one key");
        }
        LockKey first = copy.stream().map(LockKey::of).sorted().findFirst().orElseThrow();
        Checks.ttl(ttl, first);
        Checks.maxWait(maxWait, first);
        return HandOff.<LeaseSet>of(() -> async.acquireAll(copy, ttl, maxWait), set -> releaseUnwanted(release(set)));
    }

    /**
     * Releases {@code lease}; see {@link AsyncLockClient#release}. Idempotent: only the first release
     * can answer true. Waits for the backend at most the client's release timeout, on a timer.
     *
     * @return a Mono of true only if the lease was live on the backend and is now released; it fails
     *     with a {@link FenceGuardException} if the backend fails or does not answer in time (the lock
     *     then expires at its TTL), or with {@link IllegalArgumentException} if the lease came from
     *     another client
     * @throws NullPointerException if {@code lease} is null
     * @since 0.1
     */
    public Mono<Boolean> release(Lease lease) {
        Objects.requireNonNull(lease, "lease");
        return Mono.fromFuture(() -> future(async.release(lease)));
    }

    /**
     * Releases every lease of {@code leases}, in reverse key order, each as {@link #release(Lease)}.
     * A failure does not stop the other releases; the Mono then fails with the first error once all
     * have been tried.
     *
     * @return a Mono of true only if every lease was live and is now released
     * @throws NullPointerException if {@code leases} is null
     * @since 0.1
     */
    public Mono<Boolean> release(LeaseSet leases) {
        List<Lease> all = Objects.requireNonNull(leases, "leases").leases();
        return Flux.range(0, all.size())
                .concatMapDelayError(i -> release(all.get(all.size() - 1 - i)))
                .all(Boolean::booleanValue);
    }

    /**
     * Extends a live lease; see {@link LockClient#extend}. Bounded by the time the lease has left; a
     * false answer marks the lease lost and tells the client's listener.
     *
     * @return a Mono of true if the lease was live and is now extended
     * @throws IllegalArgumentException if the TTL is invalid
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public Mono<Boolean> extend(Lease lease, Duration ttl) {
        Objects.requireNonNull(lease, "lease");
        Checks.ttl(ttl, lease.key());
        return Mono.fromFuture(() -> future(async.extend(lease, ttl)));
    }

    /**
     * The fence and expiry of the live lease on {@code key}; for diagnostics.
     *
     * @return a Mono of the lock's state, empty if no live lease holds the key
     * @throws IllegalArgumentException if the key is invalid
     * @throws NullPointerException if {@code key} is null
     * @since 0.1
     */
    public Mono<LockInfo> lookup(String key) {
        LockKey.of(key);
        return Mono.fromFuture(() -> future(async.lookup(key))).flatMap(Mono::justOrEmpty);
    }

    /**
     * Runs {@code work} while holding the lock on {@code key}. On subscription: acquires the lock
     * (waiting up to {@code maxWait}), calls {@code work} with the lease and subscribes to the Mono it
     * returns, renews the lease by the time it has left (as the core client does) while that Mono is pending, and releases the lease
     * when it completes, fails or is cancelled. The result emits the work's value after the release.
     * Nothing happens before subscription; every subscription takes the lock anew.
     *
     * <p>Cancelling the subscription while waiting for the lock stops waiting and leaves no lock
     * behind; cancelling it while the work runs cancels the work's Mono and releases the lease. Loss of
     * the lease (a renewal finds it gone, or none succeeds before its local deadline) is reported to the
     * client's {@link dev.fenceguard.core.LockListener} and shows in {@link Lease#isValid()}: the work is
     * not cancelled, and its writes, which carry {@link Lease#fence()}, are refused by any resource that
     * has seen a newer lease. The subscriber's {@link reactor.util.context.Context} is visible to the
     * work's Mono.
     *
     * <pre>{@code
     * Mono<Invoice> paid = locks.withLock("invoices:7", Duration.ofSeconds(30), Duration.ofSeconds(5),
     *                 lease -> invoices.markPaid(7, lease.fence()))        // your Mono<Invoice>
     *         .switchIfEmpty(Mono.error(() -> new IllegalStateException("invoice 7 is busy")));
     * }</pre>
     *
     * @param work starts the work; must not return null. Its Mono may complete empty
     *     ({@code Mono<Void>} work is fine)
     * @return a Mono of the work's value; empty if the lock could not be had within {@code maxWait} or
     *     the work completed empty (have the work emit a value if you need to tell these apart); it fails
     *     with the work's error, or with a {@link FenceGuardException} if the backend fails while
     *     acquiring
     * @throws IllegalArgumentException if the key, TTL or wait is invalid
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public <T> Mono<T> withLock(String key, Duration ttl, Duration maxWait, Function<? super Lease, ? extends Mono<T>> work) {
        Objects.requireNonNull(work, "work");
        LockKey lockKey = LockKey.of(key);
        Checks.ttl(ttl, lockKey);
        Checks.maxWait(maxWait, lockKey);
        return Mono.deferContextual(context -> Mono.fromFuture(() -> future(
                        async.withLock(key, ttl, maxWait, lease -> start(work, lease, context)))))
                .flatMap(result -> Mono.justOrEmpty(result.flatMap(Function.identity())));
    }

    /**
     * Subscribes to the work's Mono as a future, which the asynchronous client cancels when the caller
     * cancels. An empty Mono becomes an empty Optional: the asynchronous client takes null for a bug.
     */
    private static <T> CompletionStage<Optional<T>> start(Function<? super Lease, ? extends Mono<T>> work, Lease lease,
            ContextView context) {
        Mono<T> running = Objects.requireNonNull(work.apply(lease), "withLock work must not return a null Mono");
        return running.map(Optional::of).defaultIfEmpty(Optional.empty()).contextWrite(context).toFuture();
    }

    /** A Mono of an optional lease that, cancelled, leaves no lock behind: see {@link HandOff}. */
    private Mono<Lease> lease(Supplier<CompletionStage<Optional<Lease>>> call) {
        return HandOff.<Lease>of(call, lease -> releaseUnwanted(release(lease)));
    }

    private static void releaseUnwanted(Mono<Boolean> release) {
        release.subscribe(released -> {}, error -> log.warn(
                "could not release a lease whose subscriber cancelled; it expires at its TTL: {}",
                Redacted.describe(error)));
    }

    private static <T> CompletableFuture<T> future(CompletionStage<T> stage) {
        return stage.toCompletableFuture();
    }
}
