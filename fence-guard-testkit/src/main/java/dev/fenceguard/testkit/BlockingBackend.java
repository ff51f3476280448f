package dev.fenceguard.testkit;

import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A blocking view of a {@link LockBackend}, for tests that drive a backend step by step: each method
 * sends the call with {@link #timeout()} and waits for its answer, throwing what the stage failed with
 * (unwrapped). Not for production code: use a {@link dev.fenceguard.core.LockClient}.
 *
 * @param backend the backend under test
 * @param timeout passed to every call, and the longest this view waits for an answer
 * @since 0.1
 */
public record BlockingBackend(LockBackend backend, Duration timeout) {

    public BlockingBackend {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(timeout, "timeout");
    }

    /** A view that gives every call 30 s. */
    public static BlockingBackend of(LockBackend backend) {
        return new BlockingBackend(backend, Duration.ofSeconds(30));
    }

    /** {@link LockBackend#tryAcquire}, waited for. */
    public Optional<Grant> tryAcquire(LockKey key, LockId lockId, Duration ttl) {
        return await(backend.tryAcquire(key, lockId, ttl, timeout));
    }

    /** {@link LockBackend#release}, waited for. */
    public boolean release(LockKey key, LockId lockId) {
        return await(backend.release(key, lockId, timeout));
    }

    /** {@link LockBackend#extend}, waited for. */
    public Optional<Instant> extend(LockKey key, LockId lockId, Duration ttl) {
        return await(backend.extend(key, lockId, ttl, timeout));
    }

    /** {@link LockBackend#lookup}, waited for. */
    public Optional<LockInfo> lookup(LockKey key) {
        return await(backend.lookup(key, timeout));
    }

    /** The backend's name. */
    public String name() {
        return backend.name();
    }

    private <T> T await(CompletionStage<T> stage) {
        try {
            // A little longer than the call's own timeout, which the backend must honour itself.
            return stage.toCompletableFuture().get(timeout.toMillis() + 5_000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + backend.name(), e);
        } catch (TimeoutException e) {
            throw new AssertionError(backend.name() + " did not complete a call within its timeout " + timeout + " (+5 s)", e);
        } catch (ExecutionException | CompletionException e) {
            throw Stages.failure(e);
        }
    }
}
