package dev.fenceguard.core;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A held lock: key, lock id, fence, TTL, the backend's expiry instant and a local deadline.
 *
 * <p>The local deadline is taken on the monotonic clock from the moment the acquire (or extend)
 * request was <em>sent</em>, so the local view of the lease never outlives the server's.
 * {@link #isValid()} consults it. A lease can still be superseded without this process noticing
 * (paused past its deadline, say): that is why writes must carry {@link #fence()} to the resource.
 *
 * <p>Closing a lease releases it. {@link #close()} is idempotent and never throws: failures go to the
 * client's {@link LockListener} and the log. Thread-safe.
 *
 * <pre>{@code
 * try (Lease lease = client.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow()) {
 *     orders.update(42, newState, lease.fence());   // the resource checks the fence
 * }
 * }</pre>
 */
public final class Lease implements AutoCloseable {

    enum State { HELD, RELEASED, LOST }

    private final LockClient client;
    private final LockKey key;
    private final LockId lockId;
    private final FenceToken fence;
    private final Duration ttl;
    private final long acquiredAtNanos;
    private final AtomicReference<State> state = new AtomicReference<>(State.HELD);
    private volatile Instant expiresAt;
    private volatile long deadlineNanos;

    Lease(LockClient client, LockKey key, LockId lockId, FenceToken fence, Duration ttl,
            Instant expiresAt, long sentAtNanos) {
        this.client = client;
        this.key = key;
        this.lockId = lockId;
        this.fence = fence;
        this.ttl = ttl;
        this.expiresAt = expiresAt;
        this.acquiredAtNanos = sentAtNanos;
        this.deadlineNanos = sentAtNanos + ttl.toNanos();
    }

    /** The lock key. */
    public LockKey key() {
        return key;
    }

    /** The fence of this lease: pass it to every write the lock protects. */
    public FenceToken fence() {
        return fence;
    }

    /** The lock id; a bearer secret (its {@code toString()} is redacted). */
    public LockId lockId() {
        return lockId;
    }

    /** The TTL asked for at acquisition (extensions may use another). */
    public Duration ttl() {
        return ttl;
    }

    /** The backend's expiry instant, by the backend's clock, as of the last acquire or extend. */
    public Instant expiresAt() {
        return expiresAt;
    }

    /**
     * Whether this process may still believe it holds the lock: not released, not reported lost, and
     * the local deadline not passed. A {@code true} is a hint, never a guarantee; fences are the guarantee.
     */
    public boolean isValid() {
        return state.get() == State.HELD && client.timeSource().nanoTime() - deadlineNanos < 0;
    }

    /** Time left before the local deadline; zero when past it or no longer held. */
    public Duration remaining() {
        if (state.get() != State.HELD) {
            return Duration.ZERO;
        }
        long left = deadlineNanos - client.timeSource().nanoTime();
        return left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }

    /** Whether a renewal found the lease gone (expired or taken over) or could not renew it in time. */
    public boolean isLost() {
        return state.get() == State.LOST;
    }

    /** Releases the lease; see {@link LockClient#release(Lease)}. Idempotent; never throws. */
    @Override
    public void close() {
        client.closeQuietly(this);
    }

    @Override
    public String toString() {
        return "Lease[key=" + key + ", fence=" + fence.value() + ", lock=" + lockId.redacted()
                + ", expiresAt=" + expiresAt + ", state=" + state.get() + "]";
    }

    // --- used by LockClient ---

    LockClient client() {
        return client;
    }

    long acquiredAtNanos() {
        return acquiredAtNanos;
    }

    boolean isHeld() {
        return state.get() == State.HELD;
    }

    /** Moves HELD to RELEASED; true only for the caller that made the move. */
    boolean markReleased() {
        return state.compareAndSet(State.HELD, State.RELEASED) || state.compareAndSet(State.LOST, State.RELEASED);
    }

    boolean markLost() {
        return state.compareAndSet(State.HELD, State.LOST);
    }

    void extended(Instant newExpiry, long sentAtNanos, Duration newTtl) {
        this.expiresAt = newExpiry;
        this.deadlineNanos = sentAtNanos + newTtl.toNanos();
    }
}
