package dev.fenceguard.core.idempotency;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.internal.BoundedStores;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.internal.EventPublisher;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyEntry;
import dev.fenceguard.core.spi.IdempotencyState;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;

/**
 * The server side of an idempotency key: what happened to each operation, fenced. One call wraps a
 * piece of work: the first caller claims the key with its lease's fence and the request's
 * {@link Fingerprint}, runs the work and records the result; a retry with the same fingerprint gets the
 * recorded result without running the work; a retry while a live claim of an older fence stands gets
 * {@link IdempotencyResult.InProgress}; a different fingerprint under the same key is an
 * {@link IdempotencyConflictException}.
 *
 * <pre>{@code
 * IdempotencyStore charges = IdempotencyStore.builder(postgresIdempotencyBackend).withRetention(Duration.ofDays(1)).build();
 * locks.withLock("order:" + orderId, ttl, lease -> {
 *     String key = IdempotencyKey.builder(Profile.STRIPE).scope("shop").id(orderId).operation("charge").build();
 *     IdempotencyResult<String> charge = charges.call(key, Fingerprint.ofParts(orderId, amount), lease,
 *             ResultCodec.utf8(), () -> gateway.charge(key, amount));      // runs at most once per key, fenced
 *     orders.markPaid(orderId, charge.result().orElseThrow(), lease.fence());
 *     return null;
 * });
 * }</pre>
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

    private final IdempotencyBackend backend;
    /** {@link #backend} with every call bounded by the call timeout here: the store's server gives up, we stop waiting. */
    private final IdempotencyBackend calls;
    private final Duration retention;
    private final Duration callTimeout;
    /** Where every answer given without running the work goes; the meters subscribe there. */
    private final EventPublisher<IdempotencyEvent> events;

    private IdempotencyStore(Builder b) {
        this.backend = b.backend;
        this.calls = BoundedStores.idempotency(b.backend);
        this.retention = b.retention;
        this.callTimeout = b.callTimeout;
        this.events = IdempotencyEvent.publisher(b.metrics);
    }

    /**
     * A builder for a store on {@code backend}.
     *
     * @throws NullPointerException if {@code backend} is null
     */
    public static Builder builder(IdempotencyBackend backend) {
        return new Builder(backend);
    }

    /** The backend this store keeps its entries in. */
    public IdempotencyBackend backend() {
        return backend;
    }

    /**
     * Runs {@code work} at most once per key and fingerprint under {@code lease}'s fence, as described
     * in the class comment. The claim holds off newer holders for the time the lease has left.
     *
     * @param key the idempotency key (a valid lock key: 1 to 512 UTF-8 bytes, no NUL)
     * @param work starts the work; called on the thread that completes the claim (a driver's thread):
     *     hand blocking work to an executor of yours
     * @return a stage of how the call ended; it fails with the work's own exception, an
     *     {@link IdempotencyConflictException}, a {@link StaleFenceException} if a newer holder claimed
     *     the key, or a {@link FenceGuardException} from the backend
     * @throws IllegalArgumentException if the key is invalid or the lease is no longer valid (before any I/O)
     */
    public <T> CompletionStage<IdempotencyResult<T>> execute(String key, Fingerprint fingerprint, Lease lease,
            ResultCodec<T> codec, Supplier<? extends CompletionStage<? extends T>> work) {
        Objects.requireNonNull(lease, "lease");
        return execute(key, fingerprint, lease.fence(), claimTtl(lease, key), codec, work);
    }

    /**
     * Same as {@link #execute(String, Fingerprint, Lease, ResultCodec, Supplier)} with a fence and a
     * claim TTL of your own (the fence of a lease you hold on the key's lock, and at most the time that
     * lease has left).
     *
     * @throws IllegalArgumentException if the key or TTL is invalid (before any I/O)
     */
    public <T> CompletionStage<IdempotencyResult<T>> execute(String key, Fingerprint fingerprint, FenceToken fence,
            Duration claimTtl, ResultCodec<T> codec, Supplier<? extends CompletionStage<? extends T>> work) {
        Call<T> call = new Call<>(key, fingerprint, fence, claimTtl, codec);
        Objects.requireNonNull(work, "work");
        return claim(call).thenCompose(done -> {
            if (done.isPresent()) {
                return CompletableFuture.completedFuture(done.get());
            }
            CompletionStage<? extends T> running;
            try {
                running = Objects.requireNonNull(work.get(), "work must not return a null stage");
            } catch (RuntimeException | Error e) {
                running = CompletableFuture.failedFuture(e);
            }
            return running.handle((value, error) -> error == null ? recordSuccess(call, value) : recordFailure(call, unwrap(error)))
                    .thenCompose(s -> s);
        });
    }

    /**
     * The blocking face: claims, runs {@code work} on the calling thread, records. See
     * {@link #execute(String, Fingerprint, Lease, ResultCodec, Supplier)}.
     *
     * @throws Exception what {@code work} threw (after its failure was recorded), or as for the stage of
     *     {@code execute}; an interrupt while waiting for the backend ends the wait with
     *     {@link ErrorCode#TIMEOUT} and keeps the thread's flag
     * @throws IllegalArgumentException if the key is invalid or the lease is no longer valid (before any I/O)
     */
    public <T> IdempotencyResult<T> call(String key, Fingerprint fingerprint, Lease lease, ResultCodec<T> codec,
            Callable<? extends T> work) throws Exception {
        Objects.requireNonNull(lease, "lease");
        Call<T> call = new Call<>(key, fingerprint, lease.fence(), claimTtl(lease, key), codec);
        Objects.requireNonNull(work, "work");
        Optional<IdempotencyResult<T>> done = await(claim(call), call.key);
        if (done.isPresent()) {
            return done.get();
        }
        T value;
        try {
            value = work.call();
        } catch (Exception | Error e) {
            await(recordFailure(call, e), call.key);
            throw e; // not reached: recordFailure's stage fails with e
        }
        return await(recordSuccess(call, value), call.key);
    }

    /**
     * What the store holds for {@code key} (state, holder fence, expiry; never run), for diagnostics.
     *
     * @throws IllegalArgumentException if the key is invalid (before any I/O)
     */
    public CompletionStage<Optional<IdempotencyEntry>> lookup(String key) {
        return calls.lookup(LockKey.of(key), callTimeout);
    }

    /**
     * Deletes at most {@code maxEntries} entries whose retention has passed, in one round trip. Call it
     * on a schedule, from one process or many; on Redis entries expire by themselves and this answers 0.
     *
     * @return a stage of how many were deleted (fewer than {@code maxEntries}: none are left for now)
     * @throws IllegalArgumentException unless {@code maxEntries} is 1 to {@value #MAX_PURGE_BATCH}
     */
    public CompletionStage<Integer> purge(int maxEntries) {
        if (maxEntries < 1 || maxEntries > MAX_PURGE_BATCH) {
            throw new IllegalArgumentException("maxEntries must be 1 to " + MAX_PURGE_BATCH + ", was " + maxEntries);
        }
        return calls.purge(maxEntries, callTimeout);
    }

    @Override
    public String toString() {
        return "IdempotencyStore[" + backend + ", retention " + retention + "]";
    }

    // --- the steps ---

    /** Validated arguments of one call. */
    private record Call<T>(String key, LockKey lockKey, Fingerprint fingerprint, FenceToken fence, Duration ttl, ResultCodec<T> codec) {
        Call(String key, Fingerprint fingerprint, FenceToken fence, Duration ttl, ResultCodec<T> codec) {
            this(key, LockKey.of(Objects.requireNonNull(key, "key")), Objects.requireNonNull(fingerprint, "fingerprint"),
                    Objects.requireNonNull(fence, "fence"), Checks.ttl(ttl, key), Objects.requireNonNull(codec, "codec"));
        }
    }

    private static Duration claimTtl(Lease lease, String key) {
        long millis = (lease.remaining().toNanos() + 999_999) / 1_000_000; // up: the claim must not end before the lease
        if (!lease.isValid() || millis < 1) {
            throw new IllegalArgumentException("the lease is no longer valid (idempotency key '" + key + "'): take a new one");
        }
        return Duration.ofMillis(millis);
    }

    /** The claim; empty if this call now holds the key and must run the work, else how the call ends. */
    private <T> CompletionStage<Optional<IdempotencyResult<T>>> claim(Call<T> call) {
        return calls.claim(call.lockKey, call.fingerprint.hex(), call.fence.value(), call.ttl, retention, callTimeout)
                .thenApply(entry -> answer(call, entry));
    }

    private <T> Optional<IdempotencyResult<T>> answer(Call<T> call, IdempotencyEntry entry) {
        String name = backend.name();
        if (!entry.fingerprint().equals(call.fingerprint.hex())) {
            events.publish(new IdempotencyEvent.Answered(name, IdempotencyMetrics.Answer.CONFLICT));
            throw new IdempotencyConflictException(call.key);
        }
        long mine = call.fence.value();
        switch (entry.state()) {
            case COMPLETED -> {
                events.publish(new IdempotencyEvent.Answered(name, IdempotencyMetrics.Answer.HIT));
                return Optional.of(new IdempotencyResult.Replayed<>(call.codec.decode(entry.result()), FenceToken.of(entry.fence())));
            }
            case FAILED_FINAL -> {
                events.publish(new IdempotencyEvent.Answered(name, IdempotencyMetrics.Answer.HIT));
                return Optional.of(new IdempotencyResult.FailedFinally<>(new String(entry.result(), StandardCharsets.UTF_8),
                        FenceToken.of(entry.fence())));
            }
            case IN_PROGRESS -> {
                if (entry.fence() == mine) {
                    return Optional.empty();
                }
                if (entry.fence() < mine) {
                    events.publish(new IdempotencyEvent.Answered(name, IdempotencyMetrics.Answer.IN_PROGRESS));
                    return Optional.of(new IdempotencyResult.InProgress<>(FenceToken.of(entry.fence()), entry.expiresAt()));
                }
                throw stale(call, entry.fence());
            }
            case FAILED_RETRYABLE -> throw stale(call, entry.fence()); // left as it was: only an older fence
        }
        throw new IllegalStateException("unreachable");
    }

    private <T> CompletionStage<IdempotencyResult<T>> recordSuccess(Call<T> call, T value) {
        byte[] bytes;
        try {
            bytes = Objects.requireNonNull(call.codec.encode(value), "codec must not encode to null");
            requireSize(call, bytes);
        } catch (RuntimeException e) {
            // Nothing can be recorded for this result: let the next attempt run it again.
            return recordFailure(call, e);
        }
        return calls.record(call.lockKey, call.fence.value(), IdempotencyState.COMPLETED, bytes, retention, callTimeout)
                .thenApply(refused -> {
                    if (refused.isPresent()) {
                        throw stale(call, refused.getAsLong());
                    }
                    return new IdempotencyResult.Executed<>(value, call.fence);
                });
    }

    /** Records the failure (final or retryable); the stage then fails with {@code error} itself. */
    private <T> CompletionStage<IdempotencyResult<T>> recordFailure(Call<T> call, Throwable error) {
        boolean fin = error instanceof FinalFailure;
        byte[] reason = fin ? ((FinalFailure) error).reason().getBytes(StandardCharsets.UTF_8) : new byte[0];
        if (reason.length > MAX_RESULT_BYTES) {
            reason = java.util.Arrays.copyOf(reason, MAX_RESULT_BYTES);
        }
        return calls.record(call.lockKey, call.fence.value(), fin ? IdempotencyState.FAILED_FINAL : IdempotencyState.FAILED_RETRYABLE,
                reason, retention, callTimeout).handle((refused, recordError) -> {
                    if (recordError != null) {
                        error.addSuppressed(unwrap(recordError));
                    } else if (refused.isPresent()) {
                        error.addSuppressed(stale(call, refused.getAsLong()));
                    }
                    throw error instanceof RuntimeException r ? r : new CompletionException(error);
                });
    }

    private static void requireSize(Call<?> call, byte[] bytes) {
        if (bytes.length > MAX_RESULT_BYTES) {
            throw new IllegalArgumentException("an encoded result must be at most " + MAX_RESULT_BYTES + " bytes, was "
                    + bytes.length + " (idempotency key '" + call.key + "')");
        }
    }

    private static StaleFenceException stale(Call<?> call, long current) {
        return new StaleFenceException("idempotency key '" + call.key + "'", call.fence.value(), current, FencePolicy.SAME_OR_NEWER);
    }

    private static Throwable unwrap(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    private static <V> V await(CompletionStage<V> stage, String key) throws Exception {
        try {
            return stage.toCompletableFuture().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FenceGuardException(ErrorCode.TIMEOUT, key, "interrupted while waiting for the idempotency store; "
                    + "the step may or may not have run", e);
        } catch (ExecutionException e) {
            Throwable cause = unwrap(e);
            if (cause instanceof Exception x) {
                throw x;
            }
            throw (Error) cause;
        }
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
         * The bound of each backend call (claim, record, lookup, purge).
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
            Builder copy = new Builder(backend);
            copy.retention = retention;
            copy.callTimeout = callTimeout;
            copy.metrics = metrics;
            return new IdempotencyStore(copy);
        }
    }
}
