package dev.fenceguard.core.spi;

import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What a lock store must do for fence-guard. Users do not call this directly: they wrap a backend in
 * a {@link dev.fenceguard.core.LockClient} (or its {@link dev.fenceguard.core.AsyncLockClient} face),
 * which validates input, keeps local deadlines, renews, logs and measures.
 *
 * <p>Every method is one round trip and atomic on the server, and asynchronous: it returns at once
 * and never blocks the calling thread (the client calls it from its timer thread). Backends over an
 * asynchronous driver complete the stage from the driver's callbacks; backends over a blocking driver
 * (JDBC) run the call on an executor. A call that has not finished within {@code timeout} completes
 * exceptionally with {@link dev.fenceguard.core.ErrorCode#TIMEOUT}; a backend should also make the
 * server give up by then where it can (a statement or lock timeout, a call deadline), so that a hung
 * call holds no thread and no server resource much past its time. The client enforces the timeout
 * too, and releases a grant that arrives after it gave up.
 *
 * <p>Keys, lock ids and TTLs arrive validated (TTL: whole milliseconds, at least 1 ms; timeout:
 * positive). Expiry is judged by the backend's clock where it has one. Contention is a result, never
 * an exception. Driver failures complete the stage with a
 * {@link dev.fenceguard.core.FenceGuardException} carrying a mapped {@link dev.fenceguard.core.ErrorCode}.
 *
 * <p>Fences: per key, every grant carries a fence greater than any fence granted before for that key,
 * across restarts of the client and of the backend. A backend whose next fence would exceed
 * {@link dev.fenceguard.core.FenceToken#MAX_VALUE} fails with {@code FENCE_EXHAUSTED} and takes no lock.
 *
 * <p>Implementations must be thread-safe. The testkit's contract suite checks all of the above.
 *
 * @since 0.1
 */
public interface LockBackend {

    /** A short name for logs and metric tags, e.g. {@code postgres}. */
    String name();

    /**
     * Takes the lock if it is free or its holder's lease has expired.
     *
     * @return the grant, or empty if a live lease holds the key
     */
    CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout);

    /**
     * Frees the lock if {@code lockId} holds a live lease on it.
     *
     * @return true only if that lease was live and is now released; false otherwise (idempotent)
     */
    CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout);

    /**
     * Sets the expiry of a live lease to backend-now + {@code ttl}. Keeps the fence. Never revives an
     * expired lease.
     *
     * @return the new expiry, or empty if {@code lockId} holds no live lease on the key
     */
    CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout);

    /** The fence and expiry of the live lease on {@code key}, if any (for diagnostics only). */
    CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout);

    /**
     * Gets ready for the first real call, so that a service pays the first-call costs at startup
     * rather than inside its first request: connects, loads scripts, prepares or describes every
     * statement the other methods send, and loads the classes they use. It must take no lock, write
     * nothing a user can see and leave nothing behind: only read-only calls, or calls on an internal
     * key that no {@link LockKey} can name. Idempotent; safe to call concurrently with real calls.
     *
     * <p>Fails like the other methods: a {@link dev.fenceguard.core.FenceGuardException} with a mapped
     * code (e.g. {@code UNAVAILABLE} when the server is down, {@code TIMEOUT} after {@code timeout}).
     * The default does nothing, for backends with nothing to prepare.
     *
     * @since 0.1
     */
    default CompletionStage<Void> warmUp(Duration timeout) {
        return CompletableFuture.completedFuture(null);
    }
}
