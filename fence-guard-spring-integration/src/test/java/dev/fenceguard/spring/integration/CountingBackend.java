package dev.fenceguard.spring.integration;

import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/** A link to a real backend that counts the extensions granted through it. */
final class CountingBackend implements LockBackend {

    final AtomicInteger extends_ = new AtomicInteger();
    private final LockBackend backend;

    CountingBackend(LockBackend backend) {
        this.backend = backend;
    }

    @Override
    public String name() {
        return backend.name();
    }

    @Override
    public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return backend.tryAcquire(key, lockId, ttl, timeout);
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
        return backend.release(key, lockId, timeout);
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return backend.extend(key, lockId, ttl, timeout).thenApply(expiry -> {
            expiry.ifPresent(e -> extends_.incrementAndGet());
            return expiry;
        });
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        return backend.lookup(key, timeout);
    }
}
