package dev.fenceguard.reactor;

import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * A real backend with a window on it: counts what each call answered, lets a test wait for an answer
 * (a monitor and a generous bound, never a sleep), and can hold acquire answers back until the test
 * lets them through, so that a grant arrives at a moment the test chooses (after a cancel).
 */
final class SpyBackend implements LockBackend {

    enum Event { ACQUIRE_SENT, GRANTED, HELD, RELEASED, RELEASE_ANSWERED, EXTENDED }

    private static final long WAIT_MS = TimeUnit.SECONDS.toMillis(30);

    private final LockBackend delegate;
    private final Map<Event, Integer> counts = new EnumMap<>(Event.class);
    private final List<Trigger> triggers = new ArrayList<>();
    private int acquiresInFlight;
    private volatile CompletableFuture<Void> acquireGate = CompletableFuture.completedFuture(null);

    SpyBackend(LockBackend delegate) {
        this.delegate = delegate;
    }

    LockBackend delegate() {
        return delegate;
    }

    /** From now on, acquire answers wait until the returned future is completed. */
    CompletableFuture<Void> holdAcquireAnswers() {
        CompletableFuture<Void> gate = new CompletableFuture<>();
        acquireGate = gate;
        return gate;
    }

    synchronized int count(Event e) {
        return counts.getOrDefault(e, 0);
    }

    /** Waits until {@code e} has happened at least {@code n} times; fails after 30 s. */
    synchronized void await(Event e, int n) throws InterruptedException {
        long end = System.currentTimeMillis() + WAIT_MS;
        while (count(e) < n) {
            long left = end - System.currentTimeMillis();
            if (left <= 0) {
                throw new AssertionError("waited 30 s for " + n + " x " + e + ", saw " + count(e) + " (" + counts + ")");
            }
            wait(left);
        }
    }

    /** Waits until no acquire call is out (its answer, if held back, counts as out); fails after 30 s. */
    synchronized void awaitNoAcquireInFlight() throws InterruptedException {
        long end = System.currentTimeMillis() + WAIT_MS;
        while (acquiresInFlight > 0) {
            long left = end - System.currentTimeMillis();
            if (left <= 0) {
                throw new AssertionError("an acquire call was still out after 30 s (" + counts + ")");
            }
            wait(left);
        }
    }

    /**
     * Waits until no acquire call is out and every grant has been released (each a release that
     * answered true); fails after 30 s.
     */
    synchronized void awaitEveryGrantReleased() throws InterruptedException {
        long end = System.currentTimeMillis() + WAIT_MS;
        while (acquiresInFlight > 0 || count(Event.RELEASED) < count(Event.GRANTED)) {
            long left = end - System.currentTimeMillis();
            if (left <= 0) {
                throw new AssertionError("grants still held after 30 s (" + counts + ", acquires out: " + acquiresInFlight + ")");
            }
            wait(left);
        }
    }

    /**
     * Runs {@code action} once, on the thread that records it, when {@code e} has happened {@code more}
     * more times than now: a way to react to the backend without a waiting thread.
     */
    void onEvents(Event e, int more, Runnable action) {
        synchronized (this) {
            triggers.add(new Trigger(e, count(e) + more, action));
        }
    }

    private record Trigger(Event event, int atCount, Runnable action) {}

    private void record(Event e) {
        List<Runnable> due = new ArrayList<>();
        synchronized (this) {
            counts.merge(e, 1, Integer::sum);
            notifyAll();
            triggers.removeIf(t -> t.event() == e && count(e) >= t.atCount() && due.add(t.action()));
        }
        due.forEach(Runnable::run);
    }

    private synchronized void acquireDone() {
        acquiresInFlight--;
        notifyAll();
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        synchronized (this) {
            acquiresInFlight++;
        }
        record(Event.ACQUIRE_SENT);
        CompletableFuture<Void> gate = acquireGate;
        return delegate.tryAcquire(key, lockId, ttl, timeout)
                .whenComplete((grant, error) -> {
                    if (grant != null) {
                        record(grant.isPresent() ? Event.GRANTED : Event.HELD);
                    }
                })
                .thenCombine(gate, (grant, open) -> grant)
                .whenComplete((grant, error) -> acquireDone());
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
        return delegate.release(key, lockId, timeout).whenComplete((released, error) -> {
            if (Boolean.TRUE.equals(released)) {
                record(Event.RELEASED);
            }
            record(Event.RELEASE_ANSWERED);
        });
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return delegate.extend(key, lockId, ttl, timeout).whenComplete((expiry, error) -> {
            if (expiry != null && expiry.isPresent()) {
                record(Event.EXTENDED);
            }
        });
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        return delegate.lookup(key, timeout);
    }
}
