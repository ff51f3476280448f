package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.internal.Timer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the application's {@link FencePurges} targets, one after the other, every {@code interval} (a fixed
 * delay from the end of one round to the start of the next; the first round one interval after start).
 * Each target resumes after the key where its last purge stopped at its time bound, and starts again
 * from the first key once a purge went through. A target that throws is logged and metered and tried
 * again, from the same key, on the next round; the others still run. The timer is fence-guard's one
 * timer thread; the purges run on a virtual thread, never on it.
 */
final class FencePurgeSchedule implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(FencePurgeSchedule.class);
    private static final Duration STOP_WAIT = Duration.ofSeconds(30);

    /** Where each run is reported: a meter, or nothing. */
    interface Meter {
        Meter NONE = (target, outcome, took) -> {};

        /** One target's purge ended: {@code outcome} is {@code complete}, {@code stopped} (at its time bound) or {@code failed}. */
        void ran(String target, String outcome, Duration took);
    }

    private final Map<String, FencePurges.Target> targets;
    private final Purge purge;
    private final Duration interval;
    private final Meter meter;
    private final Map<String, Object> cursors = new ConcurrentHashMap<>();
    private boolean running;
    private Future<?> next;
    private Thread round;
    private long rounds;

    FencePurgeSchedule(Iterable<FencePurges> declared, Purge purge, Duration interval, Meter meter) {
        Map<String, FencePurges.Target> all = new LinkedHashMap<>();
        for (FencePurges p : declared) {
            p.targets().forEach((name, target) -> {
                if (all.putIfAbsent(name, target) != null) {
                    throw new IllegalStateException("purge target '" + name + "' is named by more than one FencePurges bean");
                }
            });
        }
        this.targets = all;
        this.purge = purge;
        this.interval = interval;
        this.meter = meter;
    }

    @Override
    public synchronized void start() {
        running = true;
        if (targets.isEmpty()) {
            log.warn("fence-guard.purge.enabled=true, but the application declares no FencePurges bean: nothing will be purged");
            return;
        }
        log.info("fence-guard purges {} every {} (batches of {}, at most {} each)", targets.keySet(), interval, purge.batchSize(),
                purge.maxDuration());
        scheduleNext();
    }

    private synchronized void scheduleNext() {
        if (running) {
            next = Timer.schedule(interval, () -> Thread.ofVirtual().name("fence-guard-purge").start(this::runRound));
        }
    }

    private void runRound() {
        synchronized (this) {
            if (!running) {
                return;
            }
            round = Thread.currentThread();
        }
        try {
            for (Map.Entry<String, FencePurges.Target> t : targets.entrySet()) {
                synchronized (this) {
                    if (!running) {
                        return;
                    }
                }
                runOne(t.getKey(), t.getValue());
            }
        } finally {
            synchronized (this) {
                round = null;
                rounds++;
                notifyAll();
            }
            scheduleNext();
        }
    }

    private void runOne(String name, FencePurges.Target target) {
        Object cursor = cursors.get(name);
        long began = System.nanoTime();
        try {
            PurgeResult r = target.purge(cursor == null ? purge : purge.withStartAfter(cursor));
            if (r == null) {
                throw new IllegalStateException("purge target '" + name + "' returned no result");
            }
            r.resumeAfter().ifPresentOrElse(k -> cursors.put(name, k), () -> cursors.remove(name));
            meter.ran(name, r.complete() ? "complete" : "stopped", Duration.ofNanos(System.nanoTime() - began));
            log.debug("fence-guard purge of '{}': removed {} in {} batches{}", name, r.removed(), r.batches(),
                    r.complete() ? "" : ", stopped at its time bound (the next round resumes there)");
        } catch (RuntimeException e) {
            meter.ran(name, "failed", Duration.ofNanos(System.nanoTime() - began));
            log.warn("fence-guard purge of '{}' failed; the next round, in {}, resumes {}", name, interval,
                    cursor == null ? "from the first key" : "where the last one stopped", e);
        }
    }

    @Override
    public void stop() {
        Thread current;
        synchronized (this) {
            running = false;
            if (next != null) {
                next.cancel(false);
            }
            current = round;
        }
        if (current != null) {
            try {
                // The round starts no other target; the one under way ends within its max duration and one batch.
                if (!current.join(STOP_WAIT)) {
                    log.warn("fence-guard purge still running {} after shutdown began; not waiting for it", STOP_WAIT);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return running;
    }

    /** The targets by name, in the order each round runs them. */
    Map<String, FencePurges.Target> targets() {
        return targets;
    }

    /** Waits until {@code n} rounds have ended; false if {@code bound} passed first. For tests. */
    synchronized boolean awaitRounds(long n, Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (rounds < n) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return true;
    }
}
