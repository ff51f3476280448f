package dev.fenceguard.core;

import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/** Delegates to a real backend, records calls, and fails on command: for the client's error paths. */
final class ScriptedBackend implements LockBackend {
    final LockBackend delegate;
    final List<String> calls = new CopyOnWriteArrayList<>();
    volatile Predicate<LockKey> failAcquire = k -> false;
    volatile boolean failExtend;
    volatile boolean failRelease;
    volatile long fenceOverride = -1;

    ScriptedBackend(LockBackend delegate) {
        this.delegate = delegate;
    }

    @Override
    public String name() {
        return "scripted";
    }

    @Override
    public Optional<Grant> tryAcquire(LockKey key, LockId lockId, Duration ttl) {
        calls.add("acquire " + key);
        if (failAcquire.test(key)) {
            throw new FenceGuardException(ErrorCode.UNAVAILABLE, key.value(), "scripted outage");
        }
        Optional<Grant> grant = delegate.tryAcquire(key, lockId, ttl);
        if (fenceOverride >= 0) {
            return grant.map(g -> new Grant(fenceOverride, g.expiresAt()));
        }
        return grant;
    }

    @Override
    public boolean release(LockKey key, LockId lockId) {
        calls.add("release " + key);
        if (failRelease) {
            throw new FenceGuardException(ErrorCode.TIMEOUT, key.value(), "scripted timeout");
        }
        return delegate.release(key, lockId);
    }

    @Override
    public Optional<Instant> extend(LockKey key, LockId lockId, Duration ttl) {
        calls.add("extend " + key);
        if (failExtend) {
            throw new FenceGuardException(ErrorCode.UNAVAILABLE, key.value(), "scripted outage");
        }
        return delegate.extend(key, lockId, ttl);
    }

    @Override
    public Optional<LockInfo> lookup(LockKey key) {
        return delegate.lookup(key);
    }
}
