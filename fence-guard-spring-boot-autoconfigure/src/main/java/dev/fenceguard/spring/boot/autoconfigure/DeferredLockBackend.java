package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A lock backend built on its first call. Building fence-guard-jdbc's entry opens a connection to learn
 * the database; when the properties name the database, startup must not need that connection. The build
 * runs on a virtual thread, so the caller's thread never waits on it (the lock client's call timeout
 * bounds the caller); a build that fails fails that call, and the next call tries again.
 */
final class DeferredLockBackend implements LockBackend {
    private final String name;
    private final Supplier<LockBackend> build;
    private final AtomicReference<CompletableFuture<LockBackend>> backend = new AtomicReference<>();

    DeferredLockBackend(String name, Supplier<LockBackend> build) {
        this.name = name;
        this.build = build;
    }

    @Override
    public String name() {
        return name;
    }

    private <T> CompletionStage<T> call(Function<LockBackend, CompletionStage<T>> op) {
        CompletableFuture<LockBackend> b = backend.get();
        if (b == null || b.isCompletedExceptionally()) {
            CompletableFuture<LockBackend> fresh = CompletableFuture.supplyAsync(build, r -> Thread.ofVirtual().start(r));
            b = backend.compareAndSet(b, fresh) ? fresh : backend.get();
        }
        return b.thenCompose(op);
    }

    @Override
    public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return call(b -> b.tryAcquire(key, lockId, ttl, timeout));
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
        return call(b -> b.release(key, lockId, timeout));
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return call(b -> b.extend(key, lockId, ttl, timeout));
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        return call(b -> b.lookup(key, timeout));
    }

    @Override
    public CompletionStage<Void> warmUp(Duration timeout) {
        return call(b -> b.warmUp(timeout));
    }

    @Override
    public String toString() {
        CompletableFuture<LockBackend> b = backend.get();
        return b != null && b.isDone() && !b.isCompletedExceptionally() ? b.join().toString()
                : "FenceGuardJdbc lock backend on " + name + ", built on its first call";
    }
}
