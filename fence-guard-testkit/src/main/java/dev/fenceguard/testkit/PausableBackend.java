package dev.fenceguard.testkit;

import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * One process's link to a real backend that the test can pause, as a GC pause, a stopped VM or a
 * partition would: calls made while paused are not sent until {@link #resume()}, and then they are,
 * late, and their answers arrive late. Give each simulated process its own link to the same backend.
 *
 * <pre>{@code
 * PausableBackend link = new PausableBackend(backend);
 * LockClient zombie = LockClient.of(link);
 * Lease stale = zombie.tryAcquire("orders:42", Duration.ofSeconds(1)).orElseThrow();
 * link.pause();           // its calls now go unanswered: it loses the lease at its local deadline
 * Lease fresh = LockClient.of(backend).acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(30))
 *         .orElseThrow(); // another process takes the lock once the lease expired, with a greater fence
 * link.resume();          // the zombie's late calls reach the server
 * }</pre>
 *
 * <p>The caller's own time limits (the lock client's call timeout, a lease's remaining time) still
 * apply while paused, as they would in a process whose network is cut but whose clock runs.
 *
 * @since 0.1
 */
public final class PausableBackend implements LockBackend {

    private final LockBackend backend;
    private final List<Runnable> held = new ArrayList<>();
    private boolean paused;
    /** Calls made and not yet answered (held ones included). */
    private final AtomicInteger inFlight = new AtomicInteger();

    /** A link to {@code backend}, not paused. */
    public PausableBackend(LockBackend backend) {
        this.backend = Objects.requireNonNull(backend, "backend");
    }

    /** From now on, calls wait until {@link #resume()} before they are sent. */
    public synchronized void pause() {
        paused = true;
    }

    /** Sends the calls held while paused, in the order they were made, and sends later calls at once. */
    public void resume() {
        List<Runnable> late;
        synchronized (this) {
            paused = false;
            late = new ArrayList<>(held);
            held.clear();
        }
        late.forEach(Runnable::run);
    }

    /** Whether calls are being held. */
    public synchronized boolean isPaused() {
        return paused;
    }

    /**
     * Whether every call made through this link has been answered: a test that stopped its clients waits for
     * this before it judges what they left behind (a grant that answers late is released by its client only then).
     */
    boolean isIdle() {
        return inFlight.get() == 0;
    }

    private <T> CompletionStage<T> call(Supplier<CompletionStage<T>> send) {
        inFlight.incrementAndGet();
        CompletionStage<T> stage;
        try {
            stage = sendOrHold(send);
        } catch (RuntimeException | Error e) {
            inFlight.decrementAndGet();
            throw e;
        }
        stage.whenComplete((v, e) -> inFlight.decrementAndGet());
        return stage;
    }

    private <T> CompletionStage<T> sendOrHold(Supplier<CompletionStage<T>> send) {
        synchronized (this) {
            if (paused) {
                CompletableFuture<T> late = new CompletableFuture<>();
                held.add(() -> send.get().whenComplete((v, e) -> {
                    if (e != null) {
                        late.completeExceptionally(e);
                    } else {
                        late.complete(v);
                    }
                }));
                return late;
            }
        }
        return send.get();
    }

    @Override
    public String name() {
        return backend.name();
    }

    @Override
    public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return call(() -> backend.tryAcquire(key, lockId, ttl, timeout));
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
        return call(() -> backend.release(key, lockId, timeout));
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return call(() -> backend.extend(key, lockId, ttl, timeout));
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        return call(() -> backend.lookup(key, timeout));
    }

    /** Held like every other call while paused. */
    @Override
    public CompletionStage<Void> warmUp(Duration timeout) {
        return call(() -> backend.warmUp(timeout));
    }

    @Override
    public String toString() {
        return "PausableBackend[" + backend + (isPaused() ? ", paused" : "") + "]";
    }
}
