package dev.fenceguard.testkit;

import dev.fenceguard.core.AsyncLockClient;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LeaseSet;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockInfo;
import java.time.Duration;
import java.util.Collection;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * The two faces of a {@link LockClient}: its blocking methods, and its {@link AsyncLockClient}
 * ({@link LockClient#async()}). The contract suite, the model-based property and the zombie storm run
 * through both, so that one contract is proven through each face on every backend.
 *
 * <p>{@link #over(LockClient)} gives one set of step-by-step calls for both, so a test is written once:
 * the blocking face calls the blocking methods; the asynchronous face calls the asynchronous methods
 * and waits for their stages on the test's thread (at most {@link #STAGE_BOUND}, then an
 * {@link AssertionError}: every stage is bounded by the client's own timeouts, well within it).
 *
 * <pre>{@code
 * @ParameterizedTest
 * @EnumSource(Face.class)
 * void releaseFreesTheKey(Face face) {
 *     Face.Locks locks = face.over(client);
 *     Lease lease = locks.tryAcquire("k", ttl).orElseThrow();
 *     assertThat(locks.release(lease)).isTrue();
 * }
 * }</pre>
 *
 * @since 0.1
 */
public enum Face {

    /** The blocking methods of {@link LockClient}. */
    BLOCKING,

    /** The stages of {@link AsyncLockClient}, waited for by the caller. */
    ASYNC;

    /** The longest the asynchronous face waits for a stage before it fails the test: 2 minutes. */
    public static final Duration STAGE_BOUND = Duration.ofMinutes(2);

    /** Work given to the asynchronous face's {@code withLock} runs here, never on a driver's thread. */
    private static final Executor WORK = command -> Thread.ofVirtual().name("face-async-work").start(command);

    /**
     * The operations of {@code client} through this face.
     *
     * @throws NullPointerException if {@code client} is null
     * @since 0.1
     */
    public Locks over(LockClient client) {
        Objects.requireNonNull(client, "client");
        return this == BLOCKING ? new Blocking(client) : new Async(client.async());
    }

    /**
     * The lock client's operations as blocking calls, whichever face carries them out. Each method is
     * the client method of the same name; see {@link LockClient}.
     *
     * @since 0.1
     */
    public interface Locks {

        /** The face carrying the calls. */
        Face face();

        /** {@link LockClient#tryAcquire}. */
        Optional<Lease> tryAcquire(String key, Duration ttl);

        /** {@link LockClient#acquire}; interrupting the caller cancels the wait. */
        Optional<Lease> acquire(String key, Duration ttl, Duration maxWait) throws InterruptedException;

        /** {@link LockClient#acquireAll}. */
        Optional<LeaseSet> acquireAll(Collection<String> keys, Duration ttl, Duration maxWait) throws InterruptedException;

        /**
         * {@link LockClient#withLock}: runs {@code work} under the lock, renewed meanwhile. The
         * asynchronous face runs the work on a virtual thread of its own (its stage completes when the
         * work returns), so the work may block.
         */
        <T> Optional<T> withLock(String key, Duration ttl, Duration maxWait, Function<Lease, T> work) throws InterruptedException;

        /** {@link LockClient#release}. */
        boolean release(Lease lease);

        /** {@link LockClient#extend}. */
        boolean extend(Lease lease, Duration ttl);

        /** {@link LockClient#lookup}. */
        Optional<LockInfo> lookup(String key);
    }

    private record Blocking(LockClient client) implements Locks {
        @Override
        public Face face() {
            return BLOCKING;
        }

        @Override
        public Optional<Lease> tryAcquire(String key, Duration ttl) {
            return client.tryAcquire(key, ttl);
        }

        @Override
        public Optional<Lease> acquire(String key, Duration ttl, Duration maxWait) throws InterruptedException {
            return client.acquire(key, ttl, maxWait);
        }

        @Override
        public Optional<LeaseSet> acquireAll(Collection<String> keys, Duration ttl, Duration maxWait) throws InterruptedException {
            return client.acquireAll(keys, ttl, maxWait);
        }

        @Override
        public <T> Optional<T> withLock(String key, Duration ttl, Duration maxWait, Function<Lease, T> work) throws InterruptedException {
            return client.withLock(key, ttl, maxWait, work::apply);
        }

        @Override
        public boolean release(Lease lease) {
            return client.release(lease);
        }

        @Override
        public boolean extend(Lease lease, Duration ttl) {
            return client.extend(lease, ttl);
        }

        @Override
        public Optional<LockInfo> lookup(String key) {
            return client.lookup(key);
        }
    }

    private record Async(AsyncLockClient client) implements Locks {
        @Override
        public Face face() {
            return ASYNC;
        }

        @Override
        public Optional<Lease> tryAcquire(String key, Duration ttl) {
            return joinUninterruptibly(client.tryAcquire(key, ttl));
        }

        @Override
        public Optional<Lease> acquire(String key, Duration ttl, Duration maxWait) throws InterruptedException {
            return join(client.acquire(key, ttl, maxWait));
        }

        @Override
        public Optional<LeaseSet> acquireAll(Collection<String> keys, Duration ttl, Duration maxWait) throws InterruptedException {
            return join(client.acquireAll(keys, ttl, maxWait));
        }

        @Override
        public <T> Optional<T> withLock(String key, Duration ttl, Duration maxWait, Function<Lease, T> work) throws InterruptedException {
            return join(client.withLock(key, ttl, maxWait, lease -> CompletableFuture.supplyAsync(() -> work.apply(lease), WORK)));
        }

        @Override
        public boolean release(Lease lease) {
            return joinUninterruptibly(client.release(lease));
        }

        @Override
        public boolean extend(Lease lease, Duration ttl) {
            return joinUninterruptibly(client.extend(lease, ttl));
        }

        @Override
        public Optional<LockInfo> lookup(String key) {
            return joinUninterruptibly(client.lookup(key));
        }
    }

    /**
     * Waits for {@code stage}: its value, or its failure unwrapped. An interrupt cancels the stage (the
     * client then releases a grant that arrives later) and is thrown.
     */
    private static <T> T join(CompletionStage<T> stage) throws InterruptedException {
        CompletableFuture<T> future = stage.toCompletableFuture();
        try {
            return future.get(STAGE_BOUND.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            future.cancel(false);
            throw e;
        } catch (TimeoutException e) {
            future.cancel(false);
            throw new AssertionError("an asynchronous call did not complete within " + STAGE_BOUND
                    + ", though the client bounds every call by its own timeouts", e);
        } catch (CancellationException e) {
            throw e;
        } catch (ExecutionException e) {
            throw Stages.failure(e);
        }
    }

    /** {@link #join} for the calls whose blocking twin has no {@code InterruptedException}: keeps the flag. */
    private static <T> T joinUninterruptibly(CompletionStage<T> stage) {
        try {
            return join(stage);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for an asynchronous call", e);
        }
    }
}
