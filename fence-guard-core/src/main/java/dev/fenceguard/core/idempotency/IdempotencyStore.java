package dev.fenceguard.core.idempotency;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.internal.CallerThread;
import dev.fenceguard.core.internal.Stages;
import dev.fenceguard.core.spi.IdempotencyBackend;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CompletionException;

/**
 * The server side of an idempotency key: what happened to each operation, fenced. One call wraps a
 * piece of work: the first caller claims the key with its lease's fence and the request's
 * {@link Fingerprint}, runs the work and records the result; a retry with the same fingerprint gets the
 * recorded result without running the work; a retry while a live claim of an older fence stands gets
 * {@link IdempotencyResult.InProgress}; a different fingerprint under the same key is an
 * {@link IdempotencyConflictException}.
 *
 * <pre>{@code
 * IdempotencyStore charges = IdempotencyStore.builder(idempotencyBackend).withRetention(Duration.ofDays(1)).build();
 * locks.withLock("order:" + orderId, Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> {
 *     String key = IdempotencyKey.builder(Profile.STRIPE).scope("shop").id(orderId).operation("charge").build();
 *     IdempotencyResult<String> charge = charges.call(key, Fingerprint.ofParts(orderId, amount), lease,
 *             ResultCodec.utf8(), () -> gateway.charge(key, amount));      // runs at most once per key, fenced
 *     return charge.result().orElseThrow();
 * });
 * }</pre>
 *
 * <p>This is the blocking face; {@link #async()} gives the same operations returning
 * {@code CompletionStage}s ({@link AsyncIdempotencyStore}). The blocking face runs the work on the
 * calling thread (so the lease stays in its {@link dev.fenceguard.core.LockContext}) and waits on the
 * asynchronous face for the claim and the record.
 *
 * <p><b>Interrupts.</b> An interrupt while {@link #call call} waits for its claim ends the call with
 * {@link InterruptedException} before the work runs (a claim the backend granted anyway is the lease
 * holder's, and its next call under the same fence takes it up again). Once the work has run, the
 * record of its outcome is waited for until the backend answers or the call timeout ends it, whatever
 * interrupts come: the outcome is never dropped nor reported as a {@code TIMEOUT} the backend did not
 * cause. {@link #lookup} and {@link #purge} wait the same way. A wait that an interrupt did not end sets
 * the thread's interrupt status again when it returns.
 *
 * <p><b>Fenced.</b> A result is recorded only if the recorder's fence is still the newest claim of the
 * key: a zombie that finishes after its successor claimed gets a {@link StaleFenceException} and
 * changes nothing. A claim with a greater fence takes over an in-progress claim once that has run out
 * (by the backend's clock), and takes over a retryable failure at once. Take the fences for one
 * idempotency key from one lock key, or they do not compare.
 *
 * <p><b>Failures.</b> Work that throws {@link FinalFailure} is recorded as failed for good and every
 * retry gets {@link IdempotencyResult.FailedFinally}; any other exception is recorded as retryable
 * (the next claim runs the work again) and reaches the caller as it was thrown.
 *
 * <p>Entries are kept for the {@linkplain Builder#withRetention retention} after they are recorded
 * (or after their claim runs out), then count as absent; {@link #purge(int)} deletes them in bounded
 * batches. Bad input fails with {@link IllegalArgumentException} before any I/O. Immutable and
 * thread-safe.
 *
 * @since 0.1
 */
public final class IdempotencyStore {

    /** Largest encoded result accepted (a Firestore document holds at most 1 MiB). */
    public static final int MAX_RESULT_BYTES = 256 * 1024;
    /** Largest purge batch. */
    public static final int MAX_PURGE_BATCH = 10_000;

    private final AsyncIdempotencyStore async;

    private IdempotencyStore(AsyncIdempotencyStore async) {
        this.async = async;
    }

    /**
     * A builder for a store on {@code backend}.
     *
     * @throws NullPointerException if {@code backend} is null
     */
    public static Builder builder(IdempotencyBackend backend) {
        return new Builder(backend);
    }

    /** The non-blocking face of this store: same settings, same backend. */
    public AsyncIdempotencyStore async() {
        return async;
    }

    /**
     * Claims {@code key}, runs {@code work} on the calling thread, records its outcome: at most once per
     * key and fingerprint under {@code lease}'s fence, as described in the class comment. The claim holds
     * off newer holders for the time the lease has left.
     *
     * @param key the idempotency key (a valid lock key: 1 to 512 UTF-8 bytes, no NUL)
     * @param fingerprint what the request said; a retry under the same key must carry the same one
     * @param lease a lease you hold on the lock that guards this key
     * @param codec turns the result into the bytes the store keeps, and back for a replay
     * @param work the work
     * @return how the call ended
     * @throws Exception what {@code work} threw (after its failure was recorded)
     * @throws IdempotencyConflictException if the key was claimed with another fingerprint
     * @throws StaleFenceException if a newer holder claimed the key
     * @throws FenceGuardException if the backend fails or does not answer in time
     * @throws InterruptedException if interrupted while waiting for the claim (the work has not run; see
     *     the class comment)
     * @throws IllegalArgumentException if the key is invalid or the lease is no longer valid (before any I/O)
     * @throws NullPointerException if an argument is null
     */
    public <T> IdempotencyResult<T> call(String key, Fingerprint fingerprint, Lease lease, ResultCodec<T> codec,
            Callable<? extends T> work) throws Exception {
        Objects.requireNonNull(lease, "lease");
        return call(key, fingerprint, lease.fence(), AsyncIdempotencyStore.claimTtl(lease, key), codec, work);
    }

    /**
     * Same as {@link #call(String, Fingerprint, Lease, ResultCodec, Callable)} with a fence and a claim TTL
     * of your own (the fence of a lease you hold on the key's lock, and at most the time that lease has
     * left).
     *
     * @throws Exception as for {@link #call(String, Fingerprint, Lease, ResultCodec, Callable)}
     * @throws IllegalArgumentException if the key or TTL is invalid (before any I/O)
     * @throws NullPointerException if an argument is null
     */
    public <T> IdempotencyResult<T> call(String key, Fingerprint fingerprint, FenceToken fence, Duration claimTtl,
            ResultCodec<T> codec, Callable<? extends T> work) throws Exception {
        AsyncIdempotencyStore.Call<T> call = new AsyncIdempotencyStore.Call<>(key, fingerprint, fence, claimTtl, codec);
        Objects.requireNonNull(work, "work");
        Optional<IdempotencyResult<T>> done = awaitClaim(CallerThread.lend(() -> async.claim(call)));
        if (done.isPresent()) {
            return done.get();
        }
        T value;
        try {
            value = work.call();
        } catch (Exception | Error e) {
            awaitRecord(CallerThread.lend(() -> async.recordFailure(call, e)));
            throw e; // not reached: recordFailure's stage fails with e
        }
        return awaitRecord(CallerThread.lend(() -> async.recordSuccess(call, value)));
    }

    /**
     * What the store holds for {@code key}: where the operation stands, the holder's fence, the expiry;
     * for diagnostics. It runs nothing.
     *
     * @return the entry, or empty if there is none or its retention has passed
     * @throws IllegalArgumentException if the key is invalid (before any I/O)
     * @throws FenceGuardException if the backend fails or does not answer in time
     */
    public Optional<IdempotencyInfo> lookup(String key) {
        return Stages.awaitUninterruptibly(CallerThread.lend(() -> async.lookup(key)));
    }

    /**
     * Deletes at most {@code maxEntries} entries whose retention has passed, in one round trip. Call it
     * on a schedule, from one process or many; on Redis entries expire by themselves and this answers 0.
     *
     * @return how many were deleted (fewer than {@code maxEntries}: none are left for now)
     * @throws IllegalArgumentException unless {@code maxEntries} is 1 to {@value #MAX_PURGE_BATCH}
     * @throws FenceGuardException if the backend fails or does not answer in time
     */
    public int purge(int maxEntries) {
        return Stages.awaitUninterruptibly(CallerThread.lend(() -> async.purge(maxEntries)));
    }

    @Override
    public String toString() {
        return async.toString().replaceFirst("^AsyncIdempotencyStore", "IdempotencyStore");
    }

    /**
     * Waits for the claim of a call, before the work runs: an interrupt ends the wait with
     * {@link InterruptedException}. A failure is thrown as it is, a checked one too.
     */
    private static <V> V awaitClaim(CompletionStage<V> stage) throws Exception {
        return Stages.await(stage.toCompletableFuture(), IdempotencyStore::asException);
    }

    /**
     * Waits for the record of a call's outcome, after the work ran: until the backend answers or the call
     * timeout ends the step, whatever interrupts come (see the class comment). A failure (the work's own
     * exception, once recorded) is thrown as it is, a checked one too.
     */
    private static <V> V awaitRecord(CompletionStage<V> stage) throws Exception {
        return Stages.awaitUninterruptibly(stage, IdempotencyStore::asException);
    }

    private static Exception asException(Throwable cause) {
        return cause instanceof Exception e ? e : new CompletionException(cause);
    }

    /**
     * Options of an {@link IdempotencyStore}. Defaults: retention 24 hours, call timeout 5 s,
     * {@link IdempotencyMetrics#automatic()}. Not thread-safe; {@link #build()} copies.
     *
     * @since 0.1
     */
    public static final class Builder {
        private final IdempotencyBackend backend;
        private Duration retention = Duration.ofHours(24);
        private Duration callTimeout = Duration.ofSeconds(5);
        private IdempotencyMetrics metrics = IdempotencyMetrics.automatic();

        private Builder(IdempotencyBackend backend) {
            this.backend = Objects.requireNonNull(backend, "backend");
        }

        /**
         * How long an outcome is kept after it is recorded (and an abandoned claim after it runs out);
         * retries after that run the work again. Match your provider's idempotency window (Stripe: 24 h).
         *
         * @throws IllegalArgumentException unless whole milliseconds from 1 ms to 365 days
         */
        public Builder withRetention(Duration retention) {
            Objects.requireNonNull(retention, "retention");
            if (retention.compareTo(Duration.ofMillis(1)) < 0 || retention.compareTo(Duration.ofDays(365)) > 0
                    || retention.getNano() % 1_000_000 != 0) {
                throw new IllegalArgumentException("retention must be whole milliseconds from 1 ms to 365 days, was " + retention);
            }
            this.retention = retention;
            return this;
        }

        /**
         * How long one call to the backend (claim, record, lookup, purge) may take before it fails with
         * {@code TIMEOUT}. Default 5 s.
         *
         * @throws IllegalArgumentException unless positive and at most 10 minutes
         */
        public Builder withCallTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative() || timeout.isZero() || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
                throw new IllegalArgumentException("call timeout must be positive and at most 10 min, was " + timeout);
            }
            this.callTimeout = timeout;
            return this;
        }

        /**
         * Where hits, conflicts and in-progress answers are counted; default {@link IdempotencyMetrics#automatic()}.
         *
         * @throws NullPointerException if {@code metrics} is null
         */
        public Builder withMetrics(IdempotencyMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /** A store with these settings. */
        public IdempotencyStore build() {
            return new IdempotencyStore(new AsyncIdempotencyStore(backend, retention, callTimeout, metrics));
        }
    }
}
