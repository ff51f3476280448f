package dev.fenceguard.testkit.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
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
import java.util.function.Supplier;

/**
 * A backend that answers through its delegate, or, while switched off, fails every call with
 * {@code UNAVAILABLE} as an unreachable server would: what {@code TestLocks.disconnect()} needs.
 */
public final class SwitchableBackend implements LockBackend {

    private final LockBackend delegate;
    private volatile boolean reachable = true;

    public SwitchableBackend(LockBackend delegate) {
        this.delegate = delegate;
    }

    public void reachable(boolean reachable) {
        this.reachable = reachable;
    }

    public boolean reachable() {
        return reachable;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return call(key, () -> delegate.tryAcquire(key, lockId, ttl, timeout));
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
        return call(key, () -> delegate.release(key, lockId, timeout));
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return call(key, () -> delegate.extend(key, lockId, ttl, timeout));
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        return call(key, () -> delegate.lookup(key, timeout));
    }

    @Override
    public CompletionStage<Void> warmUp(Duration timeout) {
        return call(null, () -> delegate.warmUp(timeout));
    }

    private <T> CompletionStage<T> call(LockKey key, Supplier<CompletionStage<T>> call) {
        if (!reachable) {
            return CompletableFuture.failedFuture(new FenceGuardException(ErrorCode.UNAVAILABLE, key == null ? null : key.value(),
                    "the test disconnected the backend (TestLocks.disconnect())"));
        }
        return call.get();
    }
}
