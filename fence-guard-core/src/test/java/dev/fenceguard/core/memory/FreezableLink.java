package dev.fenceguard.core.memory;

import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * One simulated process's link to a shared in-memory backend, counting its calls; it can be frozen, as a
 * paused process or a partition would be: calls made while frozen answer only on thaw, late.
 */
public final class FreezableLink implements LockBackend {
    private final InMemoryLockBackend backend;
    private final List<Runnable> held = new ArrayList<>();
    private boolean frozen;
    private int calls;

    public FreezableLink(InMemoryLockBackend backend) {
        this.backend = backend;
    }

    /** How many calls were made through this link. */
    public synchronized int calls() {
        return calls;
    }

    public synchronized void freeze() {
        frozen = true;
    }

    public void thaw() {
        List<Runnable> late;
        synchronized (this) {
            frozen = false;
            late = new ArrayList<>(held);
            held.clear();
        }
        late.forEach(Runnable::run);
    }

    private <T> CompletionStage<T> call(Supplier<T> op) {
        synchronized (this) {
            calls++;
            if (frozen) {
                CompletableFuture<T> late = new CompletableFuture<>();
                held.add(() -> late.complete(op.get())); // the server acts when the pause ends
                return late;
            }
        }
        return CompletableFuture.completedFuture(op.get());
    }

    @Override
    public String name() {
        return "in-memory";
    }

    @Override
    public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return call(() -> backend.tryAcquire(key, lockId, ttl));
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
        return call(() -> backend.release(key, lockId));
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return call(() -> backend.extend(key, lockId, ttl));
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        return call(() -> backend.lookup(key));
    }
}
