package dev.fenceguard.core;

import java.time.Instant;
import java.util.Objects;

/**
 * What {@link LockClient#lookup(String)} tells about a live lock: its key, fence and expiry. It never
 * includes the lock id, so diagnostics cannot be used to release someone else's lock.
 *
 * @param key the lock key
 * @param fence the fence of the current holder
 * @param expiresAt when the backend will consider the lock free, by the backend's clock
 * @since 0.1
 */
public record LockInfo(LockKey key, FenceToken fence, Instant expiresAt) {
    public LockInfo {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fence, "fence");
        Objects.requireNonNull(expiresAt, "expiresAt");
    }
}
