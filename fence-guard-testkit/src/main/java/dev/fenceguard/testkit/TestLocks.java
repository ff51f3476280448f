package dev.fenceguard.testkit;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockListener;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.testkit.internal.SwitchableBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Locks for unit tests of your own code: a real {@link LockClient} over an in-memory backend, on a
 * clock that moves only when the test says so, with leases you can make with a chosen fence and
 * expire on demand. No server, no sleeping, no flakiness.
 *
 * <pre>{@code
 * TestLocks locks = TestLocks.create(b -> b.onEvents(myListener));
 * Lease lease = locks.lease("orders:42", 7);            // fence 7, no backend to start
 * new OrderService(locks.client()).ship(42);            // your code, with a real LockClient
 * locks.expire(lease);                                  // lost now: isValid() false, listener told
 * locks.time().advance(Duration.ofSeconds(31));         // or let time pass
 * }</pre>
 *
 * <p>The client is the production one: {@code withLock} renews leases as the clock moves (each time a
 * third of the time a lease has left has passed), sets {@link dev.fenceguard.core.LockContext}, and reports loss to the
 * {@link LockListener} exactly as against a real backend. Only the backend and the clock are stand-ins:
 * {@link #expire} makes the backend let a lease go (as when it expired there, or another process took
 * the key over) and runs the renewal that finds out; {@link #disconnect} makes every call fail as an
 * unreachable server does, so that leases are lost at their local deadline once the clock passes it.
 *
 * <p>Scheduled work (renewals, backoff, deadlines) runs on the thread that calls
 * {@link ManualTimeSource#advance}, before it returns. Thread-safe. See the testkit's README.
 *
 * @since 0.1
 */
public final class TestLocks {

    /** Where the clock starts. */
    public static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    /** The TTL of {@link #lease(String, long)}. */
    public static final Duration DEFAULT_TTL = Duration.ofSeconds(30);

    private final ManualTimeSource time = new ManualTimeSource(START);
    private final InMemoryLockBackend memory = new InMemoryLockBackend(time);
    private final SwitchableBackend backend = new SwitchableBackend(memory);
    private final LockClient client;

    private TestLocks(Consumer<LockClient.Builder> settings) {
        LockClient.Builder builder = LockClient.builder(backend).withMetrics(LockMetrics.none());
        settings.accept(builder);
        this.client = builder.withTimeSource(time).build();
    }

    /** Test locks with a default client: no listener, no metrics, no observations. */
    public static TestLocks create() {
        return create(builder -> {});
    }

    /**
     * Test locks whose client has your settings: a listener ({@code b -> b.onEvents(listener)}),
     * metrics, observations, timeouts. The time source is always this object's {@link #time()}: a
     * {@code withTimeSource} in {@code settings} is replaced. Metrics default to
     * {@link LockMetrics#none()}, not Micrometer's global registry.
     *
     * @throws NullPointerException if {@code settings} is null
     */
    public static TestLocks create(Consumer<LockClient.Builder> settings) {
        return new TestLocks(Objects.requireNonNull(settings, "settings"));
    }

    /** The lock client: hand it to the code under test. */
    public LockClient client() {
        return client;
    }

    /** The clock of the client and the backend; {@link ManualTimeSource#advance} moves both. */
    public ManualTimeSource time() {
        return time;
    }

    /** {@link #lease(String, long, Duration)} with the {@link #DEFAULT_TTL}. */
    public Lease lease(String key, long fence) {
        return lease(key, fence, DEFAULT_TTL);
    }

    /**
     * A held lease on {@code key} with exactly {@code fence}, taken from this object's client (so
     * {@link #expire}, {@code close()} and {@code withLock} treat it as any other). It is not renewed:
     * it stays valid until the clock passes its TTL, it is closed, or {@link #expire}d.
     *
     * @throws IllegalArgumentException if the key or TTL is invalid, {@code fence} is outside
     *     1..{@value FenceToken#MAX_VALUE}, or not above the last fence this object issued for the key
     *     (fences never go backwards)
     * @throws IllegalStateException if a live lease holds {@code key}, or while {@link #disconnect}ed
     */
    public Lease lease(String key, long fence, Duration ttl) {
        FenceToken.of(fence);
        LockKey lockKey = LockKey.of(key);
        Checks.ttl(ttl, lockKey);
        if (!backend.reachable()) {
            throw new IllegalStateException("lease needs a reachable backend: call reconnect() first");
        }
        if (memory.lookup(lockKey).isPresent()) {
            throw new IllegalStateException("lock '" + lockKey + "' is held by a live lease of this TestLocks; close it first");
        }
        try {
            memory.advanceFence(lockKey.value(), fence - 1);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("fence " + fence + " is not above the last fence this TestLocks issued for '"
                    + lockKey + "' (fences never go backwards)", e);
        }
        return client.tryAcquire(lockKey.value(), ttl).orElseThrow(); // the key is free: checked above
    }

    /**
     * Loses {@code lease} now, as in production when its lock expires at the backend (a long pause,
     * say) or another process takes it over: the backend lets it go, so the key can be taken again with
     * a greater fence, and the renewal that finds out runs at once. Then {@link Lease#isValid()} is
     * false, {@link Lease#isLost()} true, renewal stops, the client's {@link LockListener#onLeaseLost}
     * is told (with a null cause: the backend said the lease is gone) and {@link Lease#whenLost()}
     * completes with {@code TAKEN_OVER}. Works on leases from
     * {@link #lease}, {@code acquire} and inside {@code withLock}. Does nothing to a lease already
     * released or lost.
     *
     * @throws IllegalArgumentException if the lease came from another client
     * @throws IllegalStateException while {@link #disconnect}ed (the renewal could not get an answer)
     */
    public void expire(Lease lease) {
        Objects.requireNonNull(lease, "lease");
        if (!backend.reachable()) {
            throw new IllegalStateException("expire needs a reachable backend: call reconnect() first, or advance the clock"
                    + " past the lease's deadline to lose it as unreachable");
        }
        memory.release(lease.key(), lease.lockId());
        client.extend(lease, lease.ttl()); // the renewal's own path: finds the lease gone and declares it lost
    }

    /**
     * Makes the backend unreachable: every call fails with {@code UNAVAILABLE}. Renewals fail (the
     * listener's {@code onRenewFailed}), and a lease is lost when the clock passes its local deadline
     * ({@code onLeaseLost} with the last error), as in production.
     */
    public void disconnect() {
        backend.reachable(false);
    }

    /** Makes the backend reachable again; leases lost meanwhile stay lost. */
    public void reconnect() {
        backend.reachable(true);
    }
}
