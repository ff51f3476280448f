package dev.fenceguard.reactor;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.idempotency.AsyncIdempotencyStore;
import dev.fenceguard.core.idempotency.Fingerprint;
import dev.fenceguard.core.idempotency.IdempotencyConflictException;
import dev.fenceguard.core.idempotency.IdempotencyInfo;
import dev.fenceguard.core.idempotency.IdempotencyResult;
import dev.fenceguard.core.idempotency.IdempotencyStore;
import dev.fenceguard.core.idempotency.ResultCodec;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * The {@link Mono} face of an {@link IdempotencyStore}, over its {@link AsyncIdempotencyStore}: the same
 * operations, each a lazy {@code Mono} that does nothing until subscribed and never blocks a thread. It
 * adds no logic of its own: the class comment of {@link IdempotencyStore} says what a call does.
 *
 * <pre>{@code
 * ReactiveIdempotencyStore charges = ReactiveIdempotencyStore.of(IdempotencyStore.builder(idempotencyBackend).build());
 * Mono<IdempotencyResult<String>> charge = charges.call(key, Fingerprint.ofParts(orderId, amount), lease,
 *         ResultCodec.utf8(), () -> gateway.charge(key, amount));           // a Mono<String>, run at most once
 * }</pre>
 *
 * <p><b>Cancellation</b> never leaves the key claimed. A call whose subscriber cancels goes on to its end
 * on the store: cancelled before its claim was answered, it does not start the work; cancelled while the
 * work runs, it cancels the work's Mono. Either way the call ends as a work failure would, recorded as
 * retryable, so the next claim of the key runs the work at once instead of waiting for this claim to run
 * out. A call whose work already completed records its result as usual.
 *
 * <p><b>Bad input</b> (an invalid key, a null) throws {@link IllegalArgumentException} or
 * {@link NullPointerException} when the method is called; a lease that is no longer valid is refused
 * with an {@code IllegalArgumentException} error signal on subscription, before any I/O. Immutable and
 * thread-safe.
 *
 * @since 0.1
 */
public final class ReactiveIdempotencyStore {

    private final AsyncIdempotencyStore async;

    private ReactiveIdempotencyStore(AsyncIdempotencyStore async) {
        this.async = async;
    }

    /**
     * The Mono face of {@code store}: the same settings and backend.
     *
     * @throws NullPointerException if {@code store} is null
     */
    public static ReactiveIdempotencyStore of(IdempotencyStore store) {
        return new ReactiveIdempotencyStore(Objects.requireNonNull(store, "store").async());
    }

    /**
     * Runs {@code work} at most once per key and fingerprint under {@code lease}'s fence; see
     * {@link IdempotencyStore#call(String, Fingerprint, Lease, ResultCodec, java.util.concurrent.Callable)}.
     * The claim holds off newer holders for the time the lease has left at subscription.
     *
     * @param work starts the work; subscribed to only if this call claims the key. It must emit one value
     * @return a Mono of how the call ended; it fails with the work's error, an
     *     {@link IdempotencyConflictException}, a {@link StaleFenceException} if a newer holder claimed the
     *     key, or a {@link FenceGuardException} from the backend
     * @throws IllegalArgumentException if the key is invalid
     * @throws NullPointerException if an argument is null
     */
    public <T> Mono<IdempotencyResult<T>> call(String key, Fingerprint fingerprint, Lease lease, ResultCodec<T> codec,
            Supplier<? extends Mono<? extends T>> work) {
        check(key, fingerprint, codec, work);
        Objects.requireNonNull(lease, "lease");
        return guarded(work, started -> async.call(key, fingerprint, lease, codec, started));
    }

    /**
     * Same as {@link #call(String, Fingerprint, Lease, ResultCodec, Supplier)} with a fence and a claim TTL
     * of your own (the fence of a lease you hold on the key's lock, and at most the time that lease has left).
     *
     * @throws IllegalArgumentException if the key or TTL is invalid
     * @throws NullPointerException if an argument is null
     */
    public <T> Mono<IdempotencyResult<T>> call(String key, Fingerprint fingerprint, FenceToken fence, Duration claimTtl,
            ResultCodec<T> codec, Supplier<? extends Mono<? extends T>> work) {
        check(key, fingerprint, codec, work);
        Objects.requireNonNull(fence, "fence");
        dev.fenceguard.core.internal.Checks.ttl(claimTtl, key);
        return guarded(work, started -> async.call(key, fingerprint, fence, claimTtl, codec, started));
    }

    /**
     * What the store holds for {@code key}, for diagnostics; see {@link IdempotencyStore#lookup}.
     *
     * @return a Mono of the entry, empty if there is none or its retention has passed
     * @throws IllegalArgumentException if the key is invalid
     * @throws NullPointerException if {@code key} is null
     */
    public Mono<IdempotencyInfo> lookup(String key) {
        LockKey.of(key);
        return Mono.fromFuture(() -> async.lookup(key).toCompletableFuture()).flatMap(Mono::justOrEmpty);
    }

    /**
     * Deletes at most {@code maxEntries} entries whose retention has passed; see {@link IdempotencyStore#purge}.
     *
     * @return a Mono of how many were deleted
     * @throws IllegalArgumentException unless {@code maxEntries} is 1 to {@value IdempotencyStore#MAX_PURGE_BATCH}
     */
    public Mono<Integer> purge(int maxEntries) {
        if (maxEntries < 1 || maxEntries > IdempotencyStore.MAX_PURGE_BATCH) {
            throw new IllegalArgumentException("maxEntries must be 1 to " + IdempotencyStore.MAX_PURGE_BATCH + ", was " + maxEntries);
        }
        return Mono.fromFuture(() -> async.purge(maxEntries).toCompletableFuture());
    }

    /** The asynchronous face this one wraps. */
    public AsyncIdempotencyStore async() {
        return async;
    }

    @Override
    public String toString() {
        return async.toString().replaceFirst("^AsyncIdempotencyStore", "ReactiveIdempotencyStore");
    }

    private static void check(String key, Fingerprint fingerprint, ResultCodec<?> codec, Supplier<?> work) {
        LockKey.of(key);
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(codec, "codec");
        Objects.requireNonNull(work, "work");
    }

    /**
     * The call as a Mono whose cancel does not cut the call short on the store: the call always ends with a
     * record. A cancel before the claim is answered keeps the work from starting, one while it runs cancels
     * its Mono; the call then records a retryable failure and the Mono's subscriber hears nothing more.
     */
    private static <T> Mono<IdempotencyResult<T>> guarded(Supplier<? extends Mono<? extends T>> work,
            Function<Supplier<CompletionStage<T>>, CompletionStage<IdempotencyResult<T>>> call) {
        return Mono.deferContextual(context -> {
            Cancel cancel = new Cancel();
            CompletionStage<IdempotencyResult<T>> stage = call.apply(() -> cancel.start(() -> {
                Mono<? extends T> running = Objects.requireNonNull(work.get(), "work must not return a null Mono");
                return running.contextWrite(context).<T>map(v -> v).toFuture();
            }));
            return Mono.fromFuture(stage.toCompletableFuture(), true).doOnCancel(cancel::cancel);
        });
    }

    /** One call's cancel: before the work starts, it keeps it from starting; after, it cancels it. */
    private static final class Cancel {
        private boolean cancelled;
        private CompletableFuture<?> running;

        synchronized <T> CompletableFuture<T> start(Supplier<CompletableFuture<T>> work) {
            if (cancelled) {
                return CompletableFuture.failedFuture(new CancellationException("the subscriber cancelled before the work started"));
            }
            CompletableFuture<T> started = work.get();
            running = started;
            return started;
        }

        void cancel() {
            CompletableFuture<?> r;
            synchronized (this) {
                cancelled = true;
                r = running;
            }
            if (r != null) {
                r.cancel(false); // toFuture's cancel disposes the work's subscription; the call records a retryable failure
            }
        }
    }
}
