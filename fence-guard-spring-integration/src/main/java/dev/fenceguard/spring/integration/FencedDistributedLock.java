package dev.fenceguard.spring.integration;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockKey;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.scheduling.TaskScheduler;

/**
 * A lock of a {@link FencedLockRegistry}: a Spring Integration {@link DistributedLock} whose holder has a
 * fence-guard {@link Lease}, and so a fencing token to pass to every write the lock protects.
 *
 * <p><b>Reading the fence.</b> On the thread that holds the lock, {@link #fence()} is the fence of its lease
 * and {@link #lease()} the lease itself ({@link Lease#isValid()}, {@link Lease#whenLost()}, expiry). Code that
 * was handed a plain {@code Lock} casts it, or asks the registry: {@code registry.obtain(key).fence()} gives
 * the same lock. Work handed to another thread is handed the lease or the fence: the lock belongs to its thread.
 * Do not {@linkplain Lease#close() close} the lease: unlock the lock.
 *
 * <p><b>Spring's contract.</b> The lock belongs to the thread that took it and is reentrant: the same thread
 * locking again gets the same lease and fence and one more hold ({@link #getHoldCount()}), and the lease is
 * extended by that TTL in the store (as Spring's registries refresh theirs on each lock, which keeps
 * {@code LockRegistryLeaderInitiator}'s leader alive); only the last {@link #unlock()} releases it.
 * {@code unlock()} from a thread that does not hold the lock throws {@link IllegalStateException}, as
 * {@code RedisLockRegistry}'s does. {@link #lock()} waits until the lock is had and is not interruptible
 * (an interrupt that arrives meanwhile is kept: the thread is interrupted again when it returns);
 * {@link #lockInterruptibly()} and {@link #tryLock(long, TimeUnit)} end with {@link InterruptedException}
 * when interrupted, holding nothing; {@link #tryLock()} tries once, without waiting. Threads of this process
 * queue for the lock locally first, then for the store. Conditions are not supported.
 *
 * <p><b>A lost lease.</b> A lease whose TTL ran out (the holder stalled longer than it, say) may have been
 * taken over by another process, with a greater fence: fenced resources then refuse the old holder's writes
 * as stale. The old holder learns it when it locks again (the extension fails: the call throws
 * {@link ConcurrentModificationException} and takes no hold), renews ({@link IllegalStateException}), or
 * unlocks: if the store no longer had the lease, the last {@code unlock()} frees the lock locally and throws
 * {@link ConcurrentModificationException}, as Spring's JDBC and Redis registries do when the lock "was
 * released in the store due to expiration". If the store still had it (nobody else can have taken it),
 * {@code unlock()} releases it and returns normally.
 *
 * <p>A backend that fails or does not answer in time makes the call throw
 * {@link dev.fenceguard.core.FenceGuardException} (after undoing its local hold); {@code lock()} does not retry
 * it. Thread-safe.
 *
 * @since 0.1
 */
public final class FencedDistributedLock implements DistributedLock {

    private static final Logger log = LoggerFactory.getLogger(FencedDistributedLock.class);

    /** One call of the lock client's acquire waits at most this long; waits longer than it take several. */
    private static final Duration WAIT_CHUNK = Duration.ofHours(1);

    private final FencedLockRegistry registry;
    private final LockClient client;
    private final LockKey key;
    private final ReentrantLock local = new ReentrantLock();
    /** The lease of the holding thread; written only by it, while it holds {@link #local}. */
    private volatile Lease lease;
    /** The background renewal of {@link #lease}, if the registry has a renewal scheduler. */
    private volatile ScheduledFuture<?> renewal;
    private volatile long lastUsedNanos = System.nanoTime();

    FencedDistributedLock(FencedLockRegistry registry, LockKey key) {
        this.registry = registry;
        this.client = registry.client();
        this.key = key;
    }

    /** The lock key. */
    public String key() {
        return key.value();
    }

    /**
     * The lease of the calling thread, which holds this lock: its fence, validity, expiry and
     * {@link Lease#whenLost()}. The same lease for every hold of one thread, until its last {@code unlock()}.
     *
     * @throws IllegalStateException if the calling thread does not hold this lock
     */
    public Lease lease() {
        requireOwner("read its lease");
        return lease;
    }

    /**
     * The fence of the calling thread's lease: pass it to every write this lock protects.
     *
     * @throws IllegalStateException if the calling thread does not hold this lock
     */
    public FenceToken fence() {
        requireOwner("read its fence");
        return lease.fence();
    }

    /** Whether the calling thread holds this lock. */
    public boolean isHeldByCurrentThread() {
        return local.isHeldByCurrentThread();
    }

    /** How many holds the calling thread has on this lock (0 if it does not hold it). */
    public int getHoldCount() {
        return local.getHoldCount();
    }

    /**
     * Takes the lock with the registry's TTL, waiting as long as it takes; not interruptible.
     *
     * @throws ConcurrentModificationException if the calling thread holds the lock already and its lease is lost
     * @throws dev.fenceguard.core.FenceGuardException if the backend fails or does not answer in time
     */
    @Override
    public void lock() {
        lock(registry.ttl());
    }

    /**
     * Takes the lock with a lease of {@code ttl}, waiting as long as it takes; not interruptible (an interrupt
     * that arrives meanwhile is kept). On the thread that holds it already, extends its lease by {@code ttl}.
     *
     * @throws NullPointerException if {@code ttl} is null
     * @throws IllegalArgumentException if {@code ttl} is not whole milliseconds from 1 ms to 30 days
     * @throws ConcurrentModificationException if the calling thread holds the lock already and its lease is lost
     * @throws dev.fenceguard.core.FenceGuardException if the backend fails or does not answer in time
     */
    @Override
    public void lock(Duration ttl) {
        FencedLockRegistry.checkTtl(ttl, "ttl");
        if (local.isHeldByCurrentThread()) {
            reenter(ttl);
            return;
        }
        boolean interrupted = false;
        local.lock();
        try {
            while (true) {
                interrupted |= Thread.interrupted(); // so that the client's wait is not cut short at once
                try {
                    Optional<Lease> got = client.acquire(key.value(), ttl, WAIT_CHUNK);
                    if (got.isPresent()) {
                        held(got.get(), ttl);
                        return;
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } catch (RuntimeException | Error e) {
            local.unlock();
            throw e;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Takes the lock with the registry's TTL, waiting as long as it takes or until interrupted.
     *
     * @throws InterruptedException if the thread is interrupted on entry or while waiting; it holds nothing new then
     *     (a grant the store makes for a request that was on its way is released when it arrives)
     * @throws ConcurrentModificationException if the calling thread holds the lock already and its lease is lost
     * @throws dev.fenceguard.core.FenceGuardException if the backend fails or does not answer in time
     */
    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before taking the lock on '" + key + "'");
        }
        Duration ttl = registry.ttl();
        if (local.isHeldByCurrentThread()) {
            reenter(ttl);
            return;
        }
        local.lockInterruptibly();
        try {
            while (true) {
                Optional<Lease> got = client.acquire(key.value(), ttl, WAIT_CHUNK);
                if (got.isPresent()) {
                    held(got.get(), ttl);
                    return;
                }
            }
        } catch (InterruptedException | RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
    }

    /**
     * Takes the lock with the registry's TTL if it is free now: one attempt at the store, no wait (another
     * thread of this process holding it counts as taken). On the thread that holds it already, extends its lease.
     *
     * @return whether the calling thread now holds the lock
     * @throws ConcurrentModificationException if the calling thread holds the lock already and its lease is lost
     * @throws dev.fenceguard.core.FenceGuardException if the backend fails or does not answer in time
     */
    @Override
    public boolean tryLock() {
        Duration ttl = registry.ttl();
        if (local.isHeldByCurrentThread()) {
            reenter(ttl);
            return true;
        }
        if (!local.tryLock()) {
            return false;
        }
        try {
            Optional<Lease> got = client.tryAcquire(key.value(), ttl);
            if (got.isEmpty()) {
                local.unlock();
                return false;
            }
            held(got.get(), ttl);
            return true;
        } catch (RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
    }

    /**
     * Takes the lock with the registry's TTL, waiting at most {@code time}; see {@link #tryLock(Duration, Duration)}.
     *
     * @throws NullPointerException if {@code unit} is null
     */
    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLock(Duration.ofNanos(unit.toNanos(time)), registry.ttl());
    }

    /**
     * Takes the lock with a lease of {@code ttl}, waiting at most {@code waitTime} (zero or negative: one attempt)
     * for the threads of this process that hold it and then for the store. On the thread that holds it
     * already, extends its lease by {@code ttl}.
     *
     * @return whether the calling thread now holds the lock; false if the wait ran out
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code ttl} is not whole milliseconds from 1 ms to 30 days
     * @throws InterruptedException if the thread is interrupted on entry or while waiting; it holds nothing new then
     *     (a grant the store makes for a request that was on its way is released when it arrives)
     * @throws ConcurrentModificationException if the calling thread holds the lock already and its lease is lost
     * @throws dev.fenceguard.core.FenceGuardException if the backend fails or does not answer in time
     */
    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        Objects.requireNonNull(waitTime, "waitTime");
        FencedLockRegistry.checkTtl(ttl, "ttl");
        long waitNanos = waitTime.isNegative() ? 0 : saturatedNanos(waitTime);
        long start = System.nanoTime();
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before taking the lock on '" + key + "'");
        }
        if (local.isHeldByCurrentThread()) {
            reenter(ttl);
            return true;
        }
        if (!local.tryLock(waitNanos, TimeUnit.NANOSECONDS)) {
            return false;
        }
        try {
            while (true) {
                long left = Math.max(0, waitNanos - (System.nanoTime() - start));
                boolean last = left <= WAIT_CHUNK.toNanos();
                Optional<Lease> got = client.acquire(key.value(), ttl, last ? Duration.ofNanos(left) : WAIT_CHUNK);
                if (got.isPresent()) {
                    held(got.get(), ttl);
                    return true;
                }
                if (last) {
                    local.unlock();
                    return false;
                }
            }
        } catch (InterruptedException | RuntimeException | Error e) {
            local.unlock();
            throw e;
        }
    }

    /**
     * Takes one hold off the calling thread's; the last one releases the lease.
     *
     * @throws IllegalStateException if the calling thread does not hold this lock
     * @throws ConcurrentModificationException on the last unlock, if the store no longer had the lease (it
     *     expired, and may have been taken over: writes made under it may have been refused as stale); the lock
     *     is free locally then
     * @throws dev.fenceguard.core.FenceGuardException on the last unlock, if the backend fails or does not
     *     answer within the client's release timeout (the lock then expires at its TTL); the lock is free locally then
     */
    @Override
    public void unlock() {
        requireOwner("unlock it");
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        Lease held = lease;
        boolean released;
        try {
            stopRenewal();
            lease = null;
            released = client.release(held);
        } finally {
            lastUsedNanos = System.nanoTime();
            local.unlock();
        }
        if (!released) {
            throw new ConcurrentModificationException("the lease on '" + key + "' (fence " + held.fence().value()
                    + ") was no longer held in the store when unlocked: it expired, and another holder may have "
                    + "taken the lock with a greater fence, so fenced resources may have refused writes made with this one");
        }
    }

    /** Not supported, as by Spring's distributed lock registries. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("conditions are not supported by a distributed lock (lock '" + key + "')");
    }

    @Override
    public String toString() {
        Lease current = lease;
        return "FencedDistributedLock[key=" + key + (current == null ? ", not held" : ", fence=" + current.fence().value()) + "]";
    }

    // --- used by the registry ---

    /** Extends the calling thread's lease; see {@link FencedLockRegistry#renewLock(Object, Duration)}. */
    void renew(Duration ttl) {
        FencedLockRegistry.checkTtl(ttl, "ttl");
        requireOwner("renew it");
        Lease held = lease;
        if (!client.extend(held, ttl)) {
            throw new IllegalStateException("could not renew the lock on '" + key + "' (fence " + held.fence().value()
                    + "): its lease is lost (it expired or was taken over)");
        }
        lastUsedNanos = System.nanoTime();
    }

    /** Whether no thread holds this lock and it was last used at least {@code ageMillis} before {@code nowNanos}. */
    boolean unusedFor(long nowNanos, long ageMillis) {
        return !local.isLocked() && TimeUnit.NANOSECONDS.toMillis(nowNanos - lastUsedNanos) >= ageMillis;
    }

    // --- internals ---

    /** One more hold of the holding thread: extends its lease by {@code ttl}, or throws if it is lost. */
    private void reenter(Duration ttl) {
        Lease held = lease;
        if (!client.extend(held, ttl)) {
            throw new ConcurrentModificationException("the lease on '" + key + "' (fence " + held.fence().value()
                    + ") is lost (it expired or was taken over), so this thread cannot lock it again: unlock it, "
                    + "then lock it anew for a new lease and fence");
        }
        local.lock(); // the thread holds it: immediate
        lastUsedNanos = System.nanoTime();
    }

    /** The first hold of the calling thread got {@code got}. */
    private void held(Lease got, Duration ttl) {
        lease = got;
        lastUsedNanos = System.nanoTime();
        TaskScheduler scheduler = registry.renewalScheduler();
        if (scheduler != null) {
            Duration every = ttl.dividedBy(3);
            renewal = scheduler.scheduleWithFixedDelay(() -> renewInBackground(got, ttl), scheduler.getClock().instant().plus(every), every);
        }
    }

    private void renewInBackground(Lease held, Duration ttl) {
        try {
            if (!client.extend(held, ttl) && lease == held) { // not merely unlocked while this renewal ran
                log.warn("lock '{}' fence {}: its lease is lost (it expired or was taken over); renewal stopped",
                        key, held.fence().value());
                cancel(held);
            }
        } catch (RuntimeException e) {
            // Logged by the client's event stream too; the next renewal tries again while the lease lasts.
            log.debug("lock '{}' fence {}: a renewal failed ({})", key, held.fence().value(), e.toString());
        }
    }

    /** Stops the renewal of {@code held} if it is still this lock's. */
    private void cancel(Lease held) {
        ScheduledFuture<?> r = renewal;
        if (r != null && lease == held) {
            r.cancel(false);
        }
    }

    private void stopRenewal() {
        ScheduledFuture<?> r = renewal;
        renewal = null;
        if (r != null) {
            r.cancel(false);
        }
    }

    private void requireOwner(String action) {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalStateException("cannot " + action + ": the lock on '" + key + "' is not held by this thread ('"
                    + Thread.currentThread().getName() + "'); a Spring Integration lock belongs to the thread that locked it");
        }
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
