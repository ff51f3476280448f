package dev.fenceguard.shedlock;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockContext;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.internal.ThreadLeases;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@code LockProvider} over any fence-guard lock backend: the lock of a {@code @SchedulerLock}
 * job is a fence-guard lease, and the job reads its fencing token from {@link LockContext} and passes it
 * to its writes, so that a resource refuses the writes of a job that ran past {@code lockAtMostFor}.
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(LockClient locks) {
 *     return FencedLockProvider.builder(locks).build();
 * }
 * }</pre>
 *
 * <p>A {@code @SchedulerLock(name = "hourly-report", ...)} job then reads
 * {@code LockContext.requireHeld("hourly-report").fence()} and passes the fence to its fenced writes
 * (docs/shedlock.md has the whole example).
 *
 * <p><b>ShedLock's semantics, kept.</b>
 * <ul>
 *   <li>The lock name is the fence-guard lock key (see {@link LockKey}: 1 to 512 UTF-8 bytes, no NUL).</li>
 *   <li>{@code lockAtMostFor} is the lease's TTL: the lock ends then on the backend, whatever the job
 *       does. It is not renewed in the background (use ShedLock's {@code LockExtender} to extend it).</li>
 *   <li>{@code lockAtLeastFor}: {@code unlock()} before that time does not release the lock; it shortens
 *       the lease so that it ends at that time (an extend to the time left, same fence).</li>
 *   <li>{@code extend} (ShedLock's {@code LockExtender}) extends the same lease: the fence stays the same.
 *       A lease that has already expired is not extended: the answer is empty.</li>
 *   <li>A lock held elsewhere gives an empty {@code Optional}; only a failing backend throws (the
 *       {@code FenceGuardException} of the {@link LockClient}).</li>
 * </ul>
 *
 * <p><b>The fence reaches the job through {@link LockContext}.</b> {@code lock()} puts the lease in the
 * context of the calling thread, which is the thread ShedLock runs the task on; {@code unlock()} takes it
 * out. So a {@code @SchedulerLock} method (which takes no arguments) calls
 * {@code LockContext.requireHeld(name)}, which also fails once the lease is past its deadline. The context
 * is per thread: work the job hands to another thread (an {@code @Async} method, a
 * {@code CompletableFuture}, an executor) sees nothing there. Read the lease or its fence on the job's
 * thread and pass it on, and let that work finish before the job returns: once ShedLock has unlocked, the
 * fence of a later run is greater and the resource refuses the earlier one's writes, as it should.
 *
 * <p>Bad lock configurations fail with an {@link IllegalArgumentException} that names the setting, before
 * any I/O: a name that is not a valid lock key, a {@code lockAtMostFor} shorter than 1 ms, longer than 30
 * days or not in whole milliseconds, a negative {@code lockAtLeastFor}.
 *
 * <p>Immutable and thread-safe. The locks it hands out are used by one thread at a time, as ShedLock does.
 *
 * @since 0.1
 */
public final class FencedLockProvider implements ExtensibleLockProvider {

    private final LockClient locks;

    private FencedLockProvider(LockClient locks) {
        this.locks = locks;
    }

    /**
     * A builder over {@code locks}: its backend, call timeout, listener and metrics serve the ShedLock locks.
     *
     * @throws NullPointerException if {@code locks} is null
     */
    public static Builder builder(LockClient locks) {
        return new Builder(Objects.requireNonNull(locks, "locks"));
    }

    /**
     * A builder over {@code backend}, through a {@link LockClient} with default settings.
     *
     * @throws NullPointerException if {@code backend} is null
     */
    public static Builder builder(LockBackend backend) {
        return new Builder(LockClient.of(Objects.requireNonNull(backend, "backend")));
    }

    /** The lock client that takes, extends and releases the leases. */
    public LockClient lockClient() {
        return locks;
    }

    /**
     * One attempt to take the lock named by {@code lockConfiguration}, for its {@code lockAtMostFor}.
     *
     * @return the lock, or empty if another live lease holds it
     * @throws NullPointerException if {@code lockConfiguration} is null
     * @throws IllegalArgumentException if the name is not a valid lock key, or {@code lockAtMostFor} or
     *     {@code lockAtLeastFor} is out of range (see the class description), before any I/O
     * @throws dev.fenceguard.core.FenceGuardException if the backend fails or does not answer in time
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration lockConfiguration) {
        Duration ttl = checked(lockConfiguration);
        return locks.tryAcquire(lockConfiguration.getName(), ttl)
                .map(lease -> new FencedLock(lockConfiguration, lease, ThreadLeases.push(lease)));
    }

    @Override
    public String toString() {
        return "FencedLockProvider[" + locks.backend().name() + "]";
    }

    /** The lease TTL of {@code config}, once every value it holds has been checked. */
    private static Duration checked(LockConfiguration config) {
        Objects.requireNonNull(config, "lockConfiguration");
        String name = config.getName();
        try {
            LockKey.of(name);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the ShedLock lock name must be a valid fence-guard lock key: " + e.getMessage(), e);
        }
        Duration atMost = config.getLockAtMostFor();
        Duration atLeast = config.getLockAtLeastFor();
        if (atMost.compareTo(Duration.ofMillis(1)) < 0 || atMost.compareTo(Checks.MAX_TTL) > 0 || atMost.getNano() % 1_000_000 != 0) {
            throw new IllegalArgumentException("lockAtMostFor is the lease's TTL: whole milliseconds, 1 ms .. " + Checks.MAX_TTL
                    + ", was " + atMost + " (lock '" + name + "')");
        }
        if (atLeast.isNegative()) {
            throw new IllegalArgumentException("lockAtLeastFor must not be negative, was " + atLeast + " (lock '" + name + "')");
        }
        return atMost;
    }

    /**
     * One ShedLock lock: the lease and its place in the thread's {@link LockContext}. After an extend the
     * extended lock carries both on; this one is spent (ShedLock's {@link AbstractSimpleLock} says so).
     */
    private final class FencedLock extends AbstractSimpleLock {
        private final Lease lease;
        private final ThreadLeases.Entry context;

        FencedLock(LockConfiguration configuration, Lease lease, ThreadLeases.Entry context) {
            super(configuration);
            this.lease = lease;
            this.context = context;
        }

        @Override
        protected void doUnlock() {
            try {
                Duration keep = timeLeftToHold();
                if (keep.isZero()) {
                    locks.release(lease);
                } else if (keep.compareTo(lease.remaining()) < 0) {
                    locks.extend(lease, keep); // shortened to end at lockAtLeastUntil; false: it had ended anyway
                }
                // else the lease ends on its own no earlier than lockAtLeastFor asks: nothing to send
            } finally {
                context.close();
            }
        }

        @Override
        protected Optional<SimpleLock> doExtend(LockConfiguration newConfiguration) {
            Duration ttl = checked(newConfiguration);
            if (locks.extend(lease, ttl)) {
                return Optional.of(new FencedLock(newConfiguration, lease, context));
            }
            context.close(); // expired or taken over: this lock is spent and the lease is no longer ours
            return Optional.empty();
        }

        /** Until ShedLock's lockAtLeastUntil, by ShedLock's clock, rounded up to whole milliseconds. */
        private Duration timeLeftToHold() {
            Duration left = Duration.between(ClockProvider.now(), lockConfiguration.getLockAtLeastUntil());
            if (left.isNegative() || left.isZero()) {
                return Duration.ZERO;
            }
            long millis = left.toMillis() + (left.toNanosPart() % 1_000_000 == 0 ? 0 : 1);
            return Duration.ofMillis(millis);
        }

        @Override
        public String toString() {
            return "FencedLock[" + lease + "]";
        }
    }

    /**
     * Options for a {@link FencedLockProvider}: there are none beyond the lock client's own. Not
     * thread-safe; {@link #build()} may be called more than once.
     *
     * @since 0.1
     */
    public static final class Builder {
        private final LockClient locks;

        private Builder(LockClient locks) {
            this.locks = locks;
        }

        /** The provider. */
        public FencedLockProvider build() {
            return new FencedLockProvider(locks);
        }
    }
}
