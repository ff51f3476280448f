package dev.fenceguard.core;

import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * Delegates to an in-memory backend, records calls, and fails or hangs on command: for the client's
 * error paths. A hung call returns a stage the test completes when it wants (a late answer).
 */
final class ScriptedBackend implements LockBackend {
    final InMemoryLockBackend delegate;
    final List<String> calls = new CopyOnWriteArrayList<>();
    final List<CompletableFuture<?>> hung = new CopyOnWriteArrayList<>();
    volatile Predicate<LockKey> failAcquire = k -> false;
    volatile boolean failExtend;
    volatile boolean failRelease;
    volatile boolean hangExtend;
    volatile boolean hangRelease;
    volatile boolean hangAcquire;
    volatile long fenceOverride = -1;
    /** Run once, by the next release call as it reaches this backend (before it is carried out), then cleared. */
    volatile Runnable beforeRelease;
    /** What {@link #warmUp} answers; each call is counted in {@link #warmUps}. */
    volatile Supplier<CompletionStage<Void>> warmUp = () -> CompletableFuture.completedFuture(null);
    final AtomicInteger warmUps = new AtomicInteger();

    ScriptedBackend(InMemoryLockBackend delegate) {
        this.delegate = delegate;
    }

    @Override
    public String name() {
        return "scripted";
    }

    @Override
    public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        calls.add("acquire " + key);
        if (failAcquire.test(key)) {
            return CompletableFuture.failedFuture(new FenceGuardException(ErrorCode.UNAVAILABLE, key.value(), "scripted outage"));
        }
        if (hangAcquire) {
            // Answers only when the test completes it: then the delegate grants, as a slow server would.
            CompletableFuture<Optional<Grant>> late = new CompletableFuture<>();
            hung.add(late);
            return late.thenApply(ignored -> delegate.tryAcquire(key, lockId, ttl));
        }
        Optional<Grant> grant = delegate.tryAcquire(key, lockId, ttl);
        if (fenceOverride >= 0) {
            return CompletableFuture.completedFuture(grant.map(g -> new Grant(fenceOverride, g.expiresAt())));
        }
        return CompletableFuture.completedFuture(grant);
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
        calls.add("release " + key);
        Runnable hook = beforeRelease;
        beforeRelease = null;
        if (hook != null) {
            hook.run();
        }
        if (failRelease) {
            return CompletableFuture.failedFuture(new FenceGuardException(ErrorCode.TIMEOUT, key.value(), "scripted timeout"));
        }
        if (hangRelease) {
            CompletableFuture<Boolean> late = new CompletableFuture<>();
            hung.add(late);
            return late.thenApply(ignored -> delegate.release(key, lockId));
        }
        return CompletableFuture.completedFuture(delegate.release(key, lockId));
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        calls.add("extend " + key);
        if (failExtend) {
            return CompletableFuture.failedFuture(new FenceGuardException(ErrorCode.UNAVAILABLE, key.value(), "scripted outage"));
        }
        if (hangExtend) {
            CompletableFuture<Optional<Instant>> late = new CompletableFuture<>();
            hung.add(late);
            return late.thenApply(ignored -> delegate.extend(key, lockId, ttl));
        }
        return CompletableFuture.completedFuture(delegate.extend(key, lockId, ttl));
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        return CompletableFuture.completedFuture(delegate.lookup(key));
    }

    /** Lets every call hung so far answer now (as the server would have, late). */
    @SuppressWarnings("unchecked")
    void answerHungCalls() {
        // Calls that hang while these answers are handled (the next step of a chain) stay hung for the next round.
        List<CompletableFuture<?>> answering = List.copyOf(hung);
        hung.removeAll(answering);
        for (CompletableFuture<?> f : answering) {
            ((CompletableFuture<Object>) f).complete(null);
        }
    }

    @Override
    public CompletionStage<Void> warmUp(Duration timeout) {
        warmUps.incrementAndGet();
        return warmUp.get();
    }
}
