package dev.fenceguard.core;

import dev.fenceguard.core.internal.ThreadLeases;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The leases of the {@code withLock} calls running on the current thread, for code that must run only
 * under a lock and for code that needs the lease without being handed it.
 *
 * <pre>{@code
 * void shipOrder(long id) {
 *     Lease lease = LockContext.requireHeld("orders:" + id);   // throws outside withLock("orders:<id>")
 *     orders.on(dataSource).update(id, lease.fence(), Assignments.of("status", "shipped")).orThrow();
 * }
 * }</pre>
 *
 * <p><b>Threads.</b> The context belongs to one thread. {@link LockClient#withLock} sets it on the
 * calling thread around the work and restores the previous context when the work ends, however it
 * ends; nested {@code withLock} calls stack, and the innermost is {@link #current()}. It is not
 * inherited: a thread, virtual thread or executor task the work starts sees nothing, because the
 * lease's holder is the work, and a task that outlives the work would see a lease that is no longer
 * held. Hand such a task the lease itself. A virtual thread that calls {@code withLock} has its own
 * context, like any thread; a thread pool's thread carries nothing from one task to the next.
 *
 * <p><b>The asynchronous face.</b> {@link AsyncLockClient#withLock} sets the context only while your
 * function runs to create the work's stage. Stages that complete later run on other threads and see
 * nothing: use the lease your function receives.
 *
 * <p><b>ShedLock.</b> fence-guard-shedlock's lock provider puts the lease of each ShedLock lock in the
 * context of the thread that locks it, from {@code lock()} to {@code unlock()}: a {@code @SchedulerLock}
 * method finds it with {@code requireHeld(name)} as code inside {@code withLock} does.
 *
 * <p>A lease in the context may have been lost meanwhile: {@link #requireHeld} checks
 * {@link Lease#isValid()}, {@link #current()} does not.
 *
 * @since 0.1
 */
public final class LockContext {

    private LockContext() {}

    /** The lease of the innermost {@code withLock} running on this thread, if any. */
    public static Optional<Lease> current() {
        List<Lease> leases = ThreadLeases.innermostFirst();
        return leases.isEmpty() ? Optional.empty() : Optional.of(leases.get(0));
    }

    /**
     * The lease on {@code key} of a {@code withLock} running on this thread, if any, valid or not.
     *
     * @throws IllegalArgumentException if {@code key} is not a valid lock key
     */
    public static Optional<Lease> current(String key) {
        LockKey lockKey = LockKey.of(key);
        for (Lease lease : ThreadLeases.innermostFirst()) {
            if (lease.key().equals(lockKey)) {
                return Optional.of(lease);
            }
        }
        return Optional.empty();
    }

    /**
     * Asserts that the calling code runs inside {@code withLock} on {@code key}, on this thread, and
     * that the lease is still {@linkplain Lease#isValid() valid}; returns that lease.
     *
     * @throws IllegalArgumentException if {@code key} is not a valid lock key
     * @throws IllegalStateException if no {@code withLock} on {@code key} runs on this thread, or its
     *     lease was released, lost or is past its local deadline; the message says which
     */
    public static Lease requireHeld(String key) {
        LockKey lockKey = LockKey.of(key);
        Lease lease = current(key).orElseThrow(() -> new IllegalStateException("this code must run inside withLock on '"
                + lockKey + "', but " + describe(ThreadLeases.innermostFirst()) + " on thread '" + Thread.currentThread().getName()
                + "' (the context is per thread: work handed to another thread or executor must be given the lease)"));
        if (!lease.isValid()) {
            throw new IllegalStateException("the lease on '" + lockKey + "' is no longer valid (" + (lease.isLost() ? "lost"
                    : lease.isHeld() ? "past its local deadline" : "released") + ", fence " + lease.fence().value()
                    + "): stop writing under it");
        }
        return lease;
    }

    private static String describe(List<Lease> leases) {
        if (leases.isEmpty()) {
            return "no withLock runs";
        }
        List<String> keys = new ArrayList<>();
        for (Lease lease : leases) {
            keys.add("'" + lease.key() + "'");
        }
        return "only withLock on " + String.join(", ", keys) + " runs";
    }

    /** Makes {@code lease} the innermost of this thread until the scope is closed, on this thread. */
    static LockObservations.Scope enter(Lease lease) {
        ThreadLeases.Entry entry = ThreadLeases.push(lease);
        return entry::close;
    }
}
