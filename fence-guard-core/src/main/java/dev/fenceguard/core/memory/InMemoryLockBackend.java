package dev.fenceguard.core.memory;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A lock backend in this process's memory: for users' unit tests, and the reference model the
 * testkit compares real backends against. Thread-safe; expiry is judged by the given
 * {@link TimeSource} (use fence-guard-testkit's {@code ManualTimeSource} to drive it by hand).
 *
 * <p>Fences are a dense counter per key that is never forgotten while this object lives: the first
 * grant of a key gets fence 1, every later one the next number. Nothing survives the process, so it
 * is no lock between processes. Its stages are complete when returned: there is no I/O to wait for.
 *
 * @since 0.1
 */
public final class InMemoryLockBackend implements LockBackend {

    private record Slot(long lastFence, LockId holder, Instant expiresAt) {
        boolean liveAt(Instant now) {
            return holder != null && now.isBefore(expiresAt);
        }
    }

    private final TimeSource time;
    private final Map<LockKey, Slot> slots = new HashMap<>();

    /** A backend on the system clock. */
    public InMemoryLockBackend() {
        this(TimeSource.system());
    }

    /** A backend whose expiry is judged by {@code time}. */
    public InMemoryLockBackend(TimeSource time) {
        this.time = Objects.requireNonNull(time, "time");
    }

    @Override
    public String name() {
        return "in-memory";
    }

    @Override
    public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        try {
            return CompletableFuture.completedFuture(tryAcquire(key, lockId, ttl));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
        return CompletableFuture.completedFuture(release(key, lockId));
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return CompletableFuture.completedFuture(extend(key, lockId, ttl));
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        return CompletableFuture.completedFuture(lookup(key));
    }

    /** {@link #tryAcquire(LockKey, LockId, Duration, Duration)} without the stage: answers at once. */
    public synchronized Optional<Grant> tryAcquire(LockKey key, LockId lockId, Duration ttl) {
        Instant now = time.now();
        Slot slot = slots.get(key);
        long last = slot == null ? 0 : slot.lastFence();
        if (slot != null && slot.liveAt(now)) {
            return Optional.empty();
        }
        if (last >= FenceToken.MAX_VALUE) {
            throw new FenceGuardException(ErrorCode.FENCE_EXHAUSTED, key.value(),
                    "the key has issued its last fence " + last + "; no lock was taken");
        }
        Instant expiresAt = now.plus(ttl);
        slots.put(key, new Slot(last + 1, lockId, expiresAt));
        return Optional.of(new Grant(last + 1, expiresAt));
    }

    /** {@link #release(LockKey, LockId, Duration)} without the stage: answers at once. */
    public synchronized boolean release(LockKey key, LockId lockId) {
        Slot slot = slots.get(key);
        if (slot == null || !lockId.equals(slot.holder()) || !slot.liveAt(time.now())) {
            return false;
        }
        slots.put(key, new Slot(slot.lastFence(), null, null));
        return true;
    }

    /** {@link #extend(LockKey, LockId, Duration, Duration)} without the stage: answers at once. */
    public synchronized Optional<Instant> extend(LockKey key, LockId lockId, Duration ttl) {
        Instant now = time.now();
        Slot slot = slots.get(key);
        if (slot == null || !lockId.equals(slot.holder()) || !slot.liveAt(now)) {
            return Optional.empty();
        }
        Instant expiresAt = now.plus(ttl);
        slots.put(key, new Slot(slot.lastFence(), lockId, expiresAt));
        return Optional.of(expiresAt);
    }

    /** {@link #lookup(LockKey, Duration)} without the stage: answers at once. */
    public synchronized Optional<LockInfo> lookup(LockKey key) {
        Slot slot = slots.get(key);
        if (slot == null || !slot.liveAt(time.now())) {
            return Optional.empty();
        }
        return Optional.of(new LockInfo(key, FenceToken.of(slot.lastFence()), slot.expiresAt()));
    }

    /**
     * For tests: sets the last fence issued for {@code key}, so the next grant gets {@code fence + 1}.
     * Only moves forward, like a real backend's counter.
     *
     * @throws IllegalArgumentException if the key is invalid, {@code fence} is negative or above
     *     {@link FenceToken#MAX_VALUE}, or lower than the key's last fence
     */
    public synchronized void advanceFence(String key, long fence) {
        LockKey lockKey = LockKey.of(key);
        if (fence < 0 || fence > FenceToken.MAX_VALUE) {
            throw new IllegalArgumentException("fence must be between 0 and " + FenceToken.MAX_VALUE + ", was " + fence);
        }
        Slot slot = slots.get(lockKey);
        long last = slot == null ? 0 : slot.lastFence();
        if (fence < last) {
            throw new IllegalArgumentException("fences never go backwards: key '" + key + "' has already issued "
                    + last + ", asked to set " + fence);
        }
        slots.put(lockKey, slot == null ? new Slot(fence, null, null) : new Slot(fence, slot.holder(), slot.expiresAt()));
    }
}
