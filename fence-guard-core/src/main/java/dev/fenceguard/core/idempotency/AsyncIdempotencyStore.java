package dev.fenceguard.core.idempotency;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.internal.BoundedStores;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.internal.EventPublisher;
import dev.fenceguard.core.internal.Stages;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyEntry;
import dev.fenceguard.core.spi.IdempotencyState;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The non-blocking face of an {@link IdempotencyStore} ({@link IdempotencyStore#async()}): the same
 * operations, each returning a {@link CompletionStage} at once; the class comment of
 * {@link IdempotencyStore} says what they do.
 *
 * <pre>{@code
 * AsyncIdempotencyStore charges = IdempotencyStore.builder(idempotencyBackend).build().async();
 * CompletionStage<String> chargeId = charges.call(key, Fingerprint.ofParts(orderId, amount), lease, ResultCodec.utf8(),
 *                 () -> gateway.chargeAsync(key, amount))                  // runs at most once per key, fenced
 *         .thenApply(charge -> charge.result().orElseThrow());
 * }</pre>
 *
 * <p>Bad input throws {@link IllegalArgumentException} (or {@link NullPointerException}) at once, before
 * any I/O, rather than failing the stage. Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class AsyncIdempotencyStore {

    private final IdempotencyBackend backend;
    private final Duration retention;
    private final Duration callTimeout;
    /** Where every answer given without running the work goes; the meters subscribe there. */
    private final EventPublisher<IdempotencyEvent> events;
    /** {@link #backend} with every call bounded by the call timeout here: the store's server gives up, we stop waiting. */
    private final IdempotencyBackend calls;

    AsyncIdempotencyStore(IdempotencyBackend backend, Duration retention, Duration callTimeout, IdempotencyMetrics metrics) {
        this.backend = backend;
        this.retention = retention;
        this.callTimeout = callTimeout;
        this.events = IdempotencyEvent.publisher(metrics);
        this.calls = BoundedStores.idempotency(backend);
    }

    /**
     * Runs {@code work} at most once per key and fingerprint under {@code lease}'s fence, as described
     * in the class comment of {@link IdempotencyStore}. The claim holds off newer holders for the time the
     * lease has left.
     *
     * @param key the idempotency key (a valid lock key: 1 to 512 UTF-8 bytes, no NUL)
     * @param fingerprint what the request said; a retry under the same key must carry the same one
     * @param lease a lease you hold on the lock that guards this key
     * @param codec turns the result into the bytes the store keeps, and back for a replay
     * @param work starts the work; called on the thread that completes the claim (a driver's thread):
     *     hand blocking work to an executor of yours
     * @return a stage of how the call ended; it fails with the work's own exception, an
     *     {@link IdempotencyConflictException}, a {@link StaleFenceException} if a newer holder claimed
     *     the key, or a {@link FenceGuardException} from the backend
     * @throws IllegalArgumentException if the key is invalid or the lease is no longer valid (before any I/O)
     * @throws NullPointerException if an argument is null
     */
    public <T> CompletionStage<IdempotencyResult<T>> call(String key, Fingerprint fingerprint, Lease lease,
            ResultCodec<T> codec, Supplier<? extends CompletionStage<? extends T>> work) {
        Objects.requireNonNull(lease, "lease");
        return call(key, fingerprint, lease.fence(), claimTtl(lease, key), codec, work);
    }

    /**
     * Same as {@link #call(String, Fingerprint, Lease, ResultCodec, Supplier)} with a fence and a
     * claim TTL of your own (the fence of a lease you hold on the key's lock, and at most the time that
     * lease has left).
     *
     * @throws IllegalArgumentException if the key or TTL is invalid (before any I/O)
     * @throws NullPointerException if an argument is null
     */
    public <T> CompletionStage<IdempotencyResult<T>> call(String key, Fingerprint fingerprint, FenceToken fence,
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
            return running.handle((value, error) -> error == null ? recordSuccess(call, value) : recordFailure(call, Stages.unwrap(error)))
                    .thenCompose(s -> s);
        });
    }

    /**
     * What the store holds for {@code key}: where the operation stands, the holder's fence, the expiry;
     * for diagnostics. It runs nothing.
     *
     * @return a stage of the entry, or of empty if there is none or its retention has passed; it fails with
     *     a {@link FenceGuardException} from the backend
     * @throws IllegalArgumentException if the key is invalid (before any I/O)
     */
    public CompletionStage<Optional<IdempotencyInfo>> lookup(String key) {
        LockKey lockKey = LockKey.of(key);
        return calls.lookup(lockKey, callTimeout).thenApply(entry -> entry.map(e -> info(lockKey.value(), e)));
    }

    /**
     * Deletes at most {@code maxEntries} entries whose retention has passed, in one round trip. Call it
     * on a schedule, from one process or many; on Redis entries expire by themselves and this answers 0.
     *
     * @return a stage of how many were deleted (fewer than {@code maxEntries}: none are left for now)
     * @throws IllegalArgumentException unless {@code maxEntries} is 1 to {@value IdempotencyStore#MAX_PURGE_BATCH}
     */
    public CompletionStage<Integer> purge(int maxEntries) {
        if (maxEntries < 1 || maxEntries > IdempotencyStore.MAX_PURGE_BATCH) {
            throw new IllegalArgumentException("maxEntries must be 1 to " + IdempotencyStore.MAX_PURGE_BATCH + ", was " + maxEntries);
        }
        return calls.purge(maxEntries, callTimeout);
    }

    @Override
    public String toString() {
        return "AsyncIdempotencyStore[" + backend.name() + ", retention " + retention + "]";
    }

    String backendName() {
        return backend.name();
    }

    private static IdempotencyInfo info(String key, IdempotencyEntry e) {
        IdempotencyInfo.Status status = switch (e.state()) {
            case IN_PROGRESS -> IdempotencyInfo.Status.IN_PROGRESS;
            case COMPLETED -> IdempotencyInfo.Status.COMPLETED;
            case FAILED_RETRYABLE -> IdempotencyInfo.Status.FAILED_RETRYABLE;
            case FAILED_FINAL -> IdempotencyInfo.Status.FAILED_FINAL;
        };
        return new IdempotencyInfo(key, status, new Fingerprint(e.fingerprint()), FenceToken.of(e.fence()), e.expiresAt(),
                e.retainUntil());
    }

    // --- the steps ---

    /** Validated arguments of one call. */
    record Call<T>(String key, LockKey lockKey, Fingerprint fingerprint, FenceToken fence, Duration ttl, ResultCodec<T> codec) {
        Call(String key, Fingerprint fingerprint, FenceToken fence, Duration ttl, ResultCodec<T> codec) {
            this(key, LockKey.of(Objects.requireNonNull(key, "key")), Objects.requireNonNull(fingerprint, "fingerprint"),
                    Objects.requireNonNull(fence, "fence"), Checks.ttl(ttl, key), Objects.requireNonNull(codec, "codec"));
        }
    }

    static Duration claimTtl(Lease lease, String key) {
        long millis = (lease.remaining().toNanos() + 999_999) / 1_000_000; // up: the claim must not end before the lease
        if (!lease.isValid() || millis < 1) {
            throw new IllegalArgumentException("the lease is no longer valid (idempotency key '" + key + "'): take a new one");
        }
        return Duration.ofMillis(millis);
    }

    /** The claim; empty if this call now holds the key and must run the work, else how the call ends. */
    <T> CompletionStage<Optional<IdempotencyResult<T>>> claim(Call<T> call) {
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

    <T> CompletionStage<IdempotencyResult<T>> recordSuccess(Call<T> call, T value) {
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
    <T> CompletionStage<IdempotencyResult<T>> recordFailure(Call<T> call, Throwable error) {
        boolean fin = error instanceof FinalFailure;
        byte[] reason = fin ? ((FinalFailure) error).reason().getBytes(StandardCharsets.UTF_8) : new byte[0];
        if (reason.length > IdempotencyStore.MAX_RESULT_BYTES) {
            reason = java.util.Arrays.copyOf(reason, IdempotencyStore.MAX_RESULT_BYTES);
        }
        return calls.record(call.lockKey, call.fence.value(), fin ? IdempotencyState.FAILED_FINAL : IdempotencyState.FAILED_RETRYABLE,
                reason, retention, callTimeout).handle((refused, recordError) -> {
                    if (recordError != null) {
                        error.addSuppressed(Stages.unwrap(recordError));
                    } else if (refused.isPresent()) {
                        error.addSuppressed(stale(call, refused.getAsLong()));
                    }
                    throw error instanceof RuntimeException r ? r : new CompletionException(error);
                });
    }

    private static void requireSize(Call<?> call, byte[] bytes) {
        if (bytes.length > IdempotencyStore.MAX_RESULT_BYTES) {
            throw new IllegalArgumentException("an encoded result must be at most " + IdempotencyStore.MAX_RESULT_BYTES + " bytes, was "
                    + bytes.length + " (idempotency key '" + call.key + "')");
        }
    }

    private static StaleFenceException stale(Call<?> call, long current) {
        return new StaleFenceException("idempotency key '" + call.key + "'", call.fence.value(), current, FencePolicy.SAME_OR_NEWER);
    }
}
