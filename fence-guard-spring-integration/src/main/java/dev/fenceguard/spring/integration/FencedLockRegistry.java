package dev.fenceguard.spring.integration;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockKey;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.scheduling.TaskScheduler;

/**
 * A Spring Integration {@code LockRegistry} over a fence-guard {@link LockClient}, so over any fence-guard
 * lock backend (PostgreSQL, MariaDB, MySQL, Redis, Firestore): the drop-in for {@code JdbcLockRegistry} and
 * {@code RedisLockRegistry} whose locks carry a fencing token.
 *
 * <pre>{@code
 * FencedLockRegistry registry = FencedLockRegistry.builder(lockClient).withTtl(Duration.ofSeconds(30)).build();
 * FencedDistributedLock lock = registry.obtain("orders:42");
 * if (lock.tryLock(5, TimeUnit.SECONDS)) {
 *     try {
 *         orders.on(dataSource).update(42L, lock.fence(), Assignments.of("status", "paid")).orThrow();
 *     } finally {
 *         lock.unlock();
 *     }
 * }
 * }</pre>
 *
 * <p>{@link #obtain(Object)} hands out one {@link FencedDistributedLock} per key (a {@code String}, a valid
 * {@link LockKey}); it keeps Spring's {@code Lock} contract: thread-owned, reentrant, unlocked by the thread
 * that locked it. Each first hold of a thread takes a lease from the lock client, with a fence greater than
 * every fence issued before for that key; while the thread holds the lock, {@link FencedDistributedLock#fence()}
 * and {@link FencedDistributedLock#lease()} give it, on that thread. A lease is granted for the registry's TTL
 * ({@link Builder#withTtl}) or the TTL given to {@code lock(Duration)} / {@code tryLock(Duration, Duration)}; it
 * is kept alive by locking again on the holding thread (which extends it, as Spring's registries refresh
 * theirs, and is what {@code LockRegistryLeaderInitiator}'s heartbeat does), by {@link #renewLock}, or in the
 * background by a {@linkplain #setRenewalTaskScheduler renewal scheduler}.
 *
 * <p>As a {@code RenewableLockRegistry}, {@link #renewLock(Object, Duration)} extends the calling thread's
 * lease (same fence). As an {@code ExpirableLockRegistry}, {@link #expireUnusedOlderThan(long)} forgets lock
 * objects no thread holds; that only frees memory, since the store excludes holders lease by lease (a lock
 * object obtained before the eviction still excludes one obtained after it).
 *
 * <p>Locks are scoped by the registry: two registries (two processes, say) on the same key and backend
 * exclude each other through the store, and a thread holding one registry's lock cannot take the other's.
 * The registry is thread-safe; the builder is not.
 *
 * @since 0.1
 */
public final class FencedLockRegistry
        implements ExpirableLockRegistry<FencedDistributedLock>, RenewableLockRegistry<FencedDistributedLock> {

    /** The TTL of a lease when none is given: 30 seconds, as {@code fence-guard.default-ttl}. */
    public static final Duration DEFAULT_TTL = Duration.ofSeconds(30);

    private final LockClient client;
    private final Duration ttl;
    private final Map<String, FencedDistributedLock> locks = new ConcurrentHashMap<>();
    private volatile TaskScheduler renewalScheduler;

    private FencedLockRegistry(LockClient client, Duration ttl) {
        this.client = client;
        this.ttl = ttl;
    }

    /**
     * A builder for a registry whose locks take their leases from {@code client}.
     *
     * @throws NullPointerException if {@code client} is null
     */
    public static Builder builder(LockClient client) {
        return new Builder(client);
    }

    /** The TTL of a lease taken by {@code lock()}, {@code lockInterruptibly()} and {@code tryLock(..)} without one. */
    public Duration ttl() {
        return ttl;
    }

    /**
     * The lock on {@code lockKey}: the same object for the same key until it is
     * {@linkplain #expireUnusedOlderThan evicted}. No I/O.
     *
     * @param lockKey the key, a {@code String} that is a valid {@link LockKey}
     * @throws NullPointerException if {@code lockKey} is null
     * @throws IllegalArgumentException if {@code lockKey} is not a {@code String} or not a valid lock key
     */
    @Override
    public FencedDistributedLock obtain(Object lockKey) {
        LockKey key = key(lockKey);
        return locks.computeIfAbsent(key.value(), k -> new FencedDistributedLock(this, key));
    }

    /**
     * Forgets the lock objects that no thread holds and that were last locked (or obtained, if never locked)
     * at least {@code age} milliseconds ago; {@code obtain} then makes new ones. Frees memory only: a forgotten
     * lock object still works, and still excludes the new one through the store.
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.nanoTime();
        locks.values().removeIf(lock -> lock.unusedFor(now, age));
    }

    /**
     * Extends the lease of the lock on {@code lockKey}, held by the calling thread, by the registry's TTL;
     * see {@link #renewLock(Object, Duration)}.
     */
    @Override
    public void renewLock(Object lockKey) {
        renewLock(lockKey, ttl);
    }

    /**
     * Extends the lease of the lock on {@code lockKey}, held by the calling thread: its store expiry becomes
     * the store's now + {@code ttl}, its fence stays the same.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the key is invalid or the TTL is not whole milliseconds in 1 ms .. 30 days
     * @throws IllegalStateException if the calling thread does not hold the lock, or its lease is lost (expired
     *     or taken over: the lease is then {@linkplain dev.fenceguard.core.Lease#isLost() lost}, and {@code unlock()}
     *     will say so too), as Spring's registries throw when a renewal fails
     * @throws dev.fenceguard.core.FenceGuardException if the backend fails or does not answer in time
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        obtain(lockKey).renew(ttl);
    }

    /**
     * Renews each lease taken from now on in the background, on {@code renewalTaskScheduler}, every third of its
     * TTL, until it is unlocked or found lost (as {@code RedisLockRegistry} does with one). Without a scheduler
     * (the default), a lease lives for its TTL unless locked again, renewed or unlocked. Set it once, when the
     * registry is made; leases taken before keep their schedule.
     *
     * @throws NullPointerException if {@code renewalTaskScheduler} is null
     */
    @Override
    public void setRenewalTaskScheduler(TaskScheduler renewalTaskScheduler) {
        this.renewalScheduler = Objects.requireNonNull(renewalTaskScheduler, "renewalTaskScheduler");
    }

    @Override
    public String toString() {
        return "FencedLockRegistry[backend=" + client.backend().name() + ", ttl=" + ttl + "]";
    }

    LockClient client() {
        return client;
    }

    TaskScheduler renewalScheduler() {
        return renewalScheduler;
    }

    private static LockKey key(Object lockKey) {
        Objects.requireNonNull(lockKey, "lockKey");
        if (!(lockKey instanceof String text)) {
            throw new IllegalArgumentException("lock keys of a FencedLockRegistry are Strings, was a "
                    + lockKey.getClass().getName());
        }
        return LockKey.of(text);
    }

    /** Checks a TTL as the lock client does, before any I/O: whole milliseconds, 1 ms .. 30 days. */
    static Duration checkTtl(Duration ttl, String what) {
        Objects.requireNonNull(ttl, what);
        if (ttl.compareTo(Duration.ofMillis(1)) < 0 || ttl.compareTo(Duration.ofDays(30)) > 0 || ttl.getNano() % 1_000_000 != 0) {
            throw new IllegalArgumentException(what + " must be whole milliseconds from 1 ms to 30 days, was " + ttl);
        }
        return ttl;
    }

    /**
     * Options for a {@link FencedLockRegistry}. Not thread-safe; {@link #build()} copies the settings, so a
     * builder can be reused.
     */
    public static final class Builder {
        private final LockClient client;
        private Duration ttl = DEFAULT_TTL;

        private Builder(LockClient client) {
            this.client = Objects.requireNonNull(client, "client");
        }

        /**
         * The TTL of the leases taken without one ({@code lock()}, {@code lockInterruptibly()},
         * {@code tryLock()}, {@code tryLock(long, TimeUnit)}, {@code renewLock(key)}); default {@link #DEFAULT_TTL}.
         *
         * @throws NullPointerException if {@code ttl} is null
         * @throws IllegalArgumentException if {@code ttl} is not whole milliseconds from 1 ms to 30 days
         */
        public Builder withTtl(Duration ttl) {
            this.ttl = checkTtl(ttl, "ttl");
            return this;
        }

        /** A new registry with these settings. */
        public FencedLockRegistry build() {
            return new FencedLockRegistry(client, ttl);
        }
    }
}
