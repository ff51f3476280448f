package dev.fenceguard.testkit;

import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.internal.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Future;

/**
 * A {@link TimeSource} that moves only when told to, for deterministic tests of expiry, renewal and
 * lease loss. Threads that {@link #sleep(Duration)} wake when {@link #advance(Duration)} has moved
 * the clock past their wake-up time, and {@link #schedule scheduled} tasks whose time has come run
 * on the thread that calls {@code advance}, in the order of their due times, before it returns. So
 * a test that advances the clock sees every renewal, backoff retry and deadline of that stretch
 * already done. Thread-safe.
 *
 * <pre>{@code
 * ManualTimeSource time = new ManualTimeSource(Instant.parse("2026-01-01T00:00:00Z"));
 * InMemoryLockBackend backend = new InMemoryLockBackend(time);
 * LockClient client = LockClient.builder(backend).withTimeSource(time).build();
 * Lease lease = client.tryAcquire("orders:42", Duration.ofSeconds(30)).orElseThrow();
 * time.advance(Duration.ofSeconds(31));   // every 30 s lease is now expired: lease.isValid() is false
 * }</pre>
 *
 * <p>A test helper, so it lives in the testkit; the clock itself is core's (core's own tests use it and
 * cannot depend on the testkit), and this class is its public face.
 *
 * @since 0.1
 */
public final class ManualTimeSource implements TimeSource {

    private final ManualClock clock;

    /**
     * A clock that reads {@code start} until advanced.
     *
     * @throws NullPointerException if {@code start} is null
     */
    public ManualTimeSource(Instant start) {
        this.clock = new ManualClock(start);
    }

    @Override
    public Instant now() {
        return clock.now();
    }

    @Override
    public long nanoTime() {
        return clock.nanoTime();
    }

    @Override
    public void sleep(Duration duration) throws InterruptedException {
        clock.sleep(duration);
    }

    /** Runs {@code task} on the thread of the {@link #advance} that moves the clock past its due time. */
    @Override
    public Future<?> schedule(Duration delay, Runnable task) {
        return clock.schedule(delay, task);
    }

    /**
     * Moves time forward, runs the tasks that came due (in order of their due times, on this thread) and
     * wakes the sleepers whose time has come.
     *
     * @throws IllegalArgumentException if {@code by} is negative
     */
    public void advance(Duration by) {
        clock.advance(by);
    }

    /** How many scheduled tasks are waiting to run (cancelled ones included until their time). */
    public int pendingTasks() {
        return clock.pendingTasks();
    }

    /**
     * Waits (in real time, at most {@code timeout}) until at least {@code count} threads are asleep
     * on this clock; lets a test step in lockstep with a background renewer.
     *
     * @return whether that many sleepers were seen before the timeout
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitSleepers(int count, Duration timeout) throws InterruptedException {
        return clock.awaitSleepers(count, timeout);
    }
}
