package dev.fenceguard.core.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * A backend's answer to a successful {@link LockBackend#tryAcquire}: the fence it issued and the
 * expiry instant by its own clock.
 *
 * @param fence the issued fence (raw; the client checks it against the token range)
 * @param expiresAt when the backend will consider the lock free
 * @since 0.1
 */
public record Grant(long fence, Instant expiresAt) {
    public Grant {
        Objects.requireNonNull(expiresAt, "expiresAt");
    }
}
