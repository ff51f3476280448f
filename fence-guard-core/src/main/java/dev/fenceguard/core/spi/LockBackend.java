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
 * (JDBC) run the call on an executor.
 *
 * <p><b>Timeouts and late answers: who owns what.</b> Each half has one owner.
 * <ul>
 *   <li>The <em>backend</em> owns the server's side: it hands {@code timeout} to the server, so that the
 *       server gives up by then (a statement and lock timeout, {@code SET STATEMENT max_statement_time},
 *       a gRPC deadline) and a hung call holds no server resource and no thread much past its time. It
 *       completes the stage with what the server answered, even after the timeout: the result, or the
 *       server's refusal mapped to {@code TIMEOUT}. Where its driver gives up on a request only by
 *       cancelling it (a gRPC call at its deadline, the connection of a server that stopped answering),
 *       it does so on fence-guard's one timer thread ({@code fence-guard-timer}, through
 *       {@code core.internal.Timer}), never on a timer of its own, and reports what the driver reports.
 *       It never undoes what a call did: it never releases a grant or an extension by itself.</li>
 *   <li>The <em>client</em> ({@link dev.fenceguard.core.LockClient} and its async face) owns the
 *       caller's side: it ends the caller's wait at {@code timeout} with
 *       {@link dev.fenceguard.core.ErrorCode#TIMEOUT}, whatever the backend is doing, and when a stage
 *       completes with a grant (or an extension) after that, it releases it, once.</li>
 * </ul>
 * An answer can arrive after the timeout even from a server that gave up in time (it granted just
 * before its deadline, and the answer was on the wire): that is the client's to undo, and why a backend
 * must still complete such a stage rather than drop it.
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
