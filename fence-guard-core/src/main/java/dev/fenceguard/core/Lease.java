package dev.fenceguard.core;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

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
 *     orders.on(dataSource).update(42L, lease.fence(), Assignments.of("status", "paid")).orThrow(); // the resource checks the fence
 * }
 * }</pre>
 *
 * @since 0.1
 */
public final class Lease implements AutoCloseable {

    enum State { HELD, RELEASED, LOST }

    /** The client that issued this lease: it releases it. */
    private final AsyncLockClient owner;
    private final TimeSource time;
    private final LockKey key;
    private final LockId lockId;
    private final FenceToken fence;
    private final Duration ttl;
    private final long acquiredAtNanos;
    private volatile State state = State.HELD;
    /** Whether a release of this lease was sent (or is being sent); guarded by this. */
    private boolean releaseSent;
    /** Whether the move to RELEASED was made from HELD (not from LOST); written once, by that move. */
    private volatile boolean releasedWhileHeld;
    private volatile Instant expiresAt;
    private volatile long deadlineNanos;
    /** The withLock this lease serves, if any: the parent of its renewals and release, told of its loss. */
    private volatile WithLockRun run;
    /**
     * What {@link #whenLost()} hangs off, made by the first of whenLost and the loss that needs it: most leases
     * are released unasked, and a future made for each was an allocation per acquisition (issue #31).
     */
    private volatile CompletableFuture<LossCause> lost;

    Lease(AsyncLockClient owner, TimeSource time, LockKey key, LockId lockId, FenceToken fence, Duration ttl,
            Instant expiresAt, long sentAtNanos) {
        this.owner = owner;
        this.time = time;
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
        return state == State.HELD && time.nanoTime() - deadlineNanos < 0;
    }

    /** Time left before the local deadline; zero when past it or no longer held. */
    public Duration remaining() {
        if (state != State.HELD) {
            return Duration.ZERO;
        }
        long left = deadlineNanos - time.nanoTime();
        return left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }

    /**
     * Whether the lease was found lost: a renewal or {@link LockClient#extend extend} found it gone
     * (expired or taken over), or no renewal succeeded before its local deadline.
     */
    public boolean isLost() {
        return state == State.LOST;
    }

    /**
     * A stage that completes, with why, when this lease is declared lost (see {@link #isLost()}); it
     * never completes if the lease is released first. Only a lease that is being renewed (inside
     * {@code withLock}) or extended can be declared lost: one held without renewal just stops being
     * {@linkplain #isValid() valid} at its deadline, and this stage does not complete for it. Work that must stop when the lock is gone, such
     * as a leader's duties, hangs off it. Dependent actions run on the thread that declares the loss
     * (a timer thread of the client): keep them short or hand them to an executor. Completing or
     * cancelling the returned stage changes nothing about the lease.
     *
     * @since 0.1
     */
    public CompletionStage<LossCause> whenLost() {
        return lost().minimalCompletionStage();
    }

    /**
     * Releases the lease; see {@link LockClient#release(Lease)}. Idempotent; never throws; waits at most
     * the client's release timeout ({@link LockClient.Builder#withReleaseTimeout}), then leaves the lock
     * to expire at its TTL. It waits on the calling thread: from an event loop or a reactive pipeline,
     * release through {@link AsyncLockClient#release(Lease)} instead.
     */
    @Override
    public void close() {
        owner.closeQuietly(this);
    }

    @Override
    public String toString() {
        return "Lease[key=" + key + ", fence=" + fence.value() + ", lock=" + lockId.redacted()
                + ", expiresAt=" + expiresAt + ", state=" + state + "]";
    }

    // --- used by the client and its renewer ---

    AsyncLockClient owner() {
        return owner;
    }

    void attach(WithLockRun run) {
        this.run = run;
    }

    /** The withLock this lease serves, or null. */
    WithLockRun run() {
        return run;
    }

    /** The observation this lease's renewals and release belong to: its withLock's, or null. */
    LockObservations.Observed parentObservation() {
        WithLockRun r = run;
        return r == null ? null : r.observed();
    }

    long acquiredAtNanos() {
        return acquiredAtNanos;
    }

    long deadlineNanos() {
        return deadlineNanos;
    }

    boolean isHeld() {
        return state == State.HELD;
    }

    /**
     * Moves HELD or LOST to RELEASED; true only for the caller that made the move, and then it must send the
     * release, unless a late extension of this lost lease was already undone (then false: the lock is freed
     * once, by that undo).
     */
    synchronized boolean markReleased() {
        if (state == State.RELEASED) {
            return false;
        }
        releasedWhileHeld = state == State.HELD;
        state = State.RELEASED;
        if (releaseSent) {
            return false;
        }
        releaseSent = true;
        return true;
    }

    /**
     * Whether this lease was still held when its owner released it: decided by the move of
     * {@link #markReleased}, so that a lease lost meanwhile is never reported both lost and released.
     */
    boolean releasedWhileHeld() {
        return releasedWhileHeld;
    }

    /**
     * Runs {@code report} only while this lease is held, and keeps it held until {@code report} returns: what
     * {@code report} publishes comes before the lease's loss or release is published, never after it.
     *
     * @return whether the lease was held (and {@code report} ran)
     */
    synchronized boolean whileHeld(Runnable report) {
        if (state != State.HELD) {
            return false;
        }
        report.run();
        return true;
    }

    /**
     * Claims the release of a lease declared lost whose extension the server granted anyway (a late answer):
     * true only once, and only while it is lost. A lease that was released by its owner is freed by that
     * release, which reached the server after the extension: sending another could free it first and make the
     * owner's release answer false.
     */
    synchronized boolean claimReleaseOfLost() {
        if (state != State.LOST || releaseSent) {
            return false;
        }
        releaseSent = true;
        return true;
    }

    /** Moves HELD to LOST; true only for the caller that made the move. */
    synchronized boolean markLost() {
        if (state != State.HELD) {
            return false;
        }
        state = State.LOST;
        return true;
    }

    /** Completes {@link #whenLost()}; called once the loss has been counted and reported. */
    void signalLost(LossCause why) {
        lost().complete(why);
    }

    /** The one future of {@link #whenLost()}: whichever of its two users comes first makes it, both get the same. */
    private CompletableFuture<LossCause> lost() {
        CompletableFuture<LossCause> f = lost;
        if (f != null) {
            return f;
        }
        synchronized (this) {
            if (lost == null) {
                lost = new CompletableFuture<>();
            }
            return lost;
        }
    }

    /**
     * Records a successful extension sent at {@code sentAtNanos}, unless the lease is no longer held: a
     * late answer never revives a lease already released or declared lost.
     *
     * @return whether the extension was recorded
     */
    synchronized boolean extended(Instant newExpiry, long sentAtNanos, Duration newTtl) {
        if (state != State.HELD) {
            return false;
        }
        this.expiresAt = newExpiry;
        this.deadlineNanos = sentAtNanos + newTtl.toNanos();
        return true;
    }
}
