package dev.fenceguard.core.leader;

import dev.fenceguard.core.AsyncLockClient;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LossCause;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.internal.EventPublisher;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.internal.Redacted;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The non-blocking face of a {@link LeaderElection} ({@link LeaderElection#async()}): the same candidate,
 * with each operation that talks to the backend returning a {@link CompletionStage} at once. The class
 * comment of {@link LeaderElection} says how a candidate campaigns and leads.
 *
 * <pre>{@code
 * AsyncLeaderElection election = LeaderElection.builder(lockClient, "billing-scheduler").build().async();
 * election.start();                                       // campaigns in the background, returns at once
 * // ... at shutdown:
 * CompletionStage<Void> stopped = election.stop().thenRun(() -> log.info("no longer campaigning"));
 * }</pre>
 *
 * <p>Not tied to threads: no thread is held while campaigning or leading. Thread-safe.
 *
 * @since 0.1
 */
public final class AsyncLeaderElection implements LeaderCandidate {

    private static final Logger log = LoggerFactory.getLogger(LeaderElection.class);

    private final AsyncLockClient locks;
    private final String name;
    private final Duration ttl;
    private final Duration campaignWait;
    private final Duration retryDelay;
    /** Where elections and revocations go: the log, the meters and the listener subscribe there. */
    private final EventPublisher<LeaderEvent> events;
    private final TimeSource time;

    private final Object guard = new Object();
    private boolean running;
    private long generation;
    private CompletableFuture<?> campaign;
    private Future<?> retry;
    private Leadership current;
    private CompletableFuture<Boolean> termEnd;
    private LeadershipListener.Revocation endingBecause;
    /** Listener calls waiting to run; run by {@link #drainCallbacks()}, one at a time. */
    private final Queue<Runnable> callbacks = new ConcurrentLinkedQueue<>();
    private final AtomicInteger draining = new AtomicInteger();
    /** The thread running listener calls now, if any: a close() from a listener must not wait for itself. */
    private volatile Thread drainingThread;

    AsyncLeaderElection(LeaderElection.Builder b) {
        this.locks = b.locks;
        this.name = b.name;
        this.ttl = b.ttl;
        this.campaignWait = b.campaignWait;
        this.retryDelay = b.retryDelay;
        this.events = LeaderEvent.publisher(b.name, b.metrics, b.listener);
        this.time = b.time;
    }

    /**
     * The current leader of {@code name}, as the backend sees it: its term and expiry, never its lock
     * id. Anyone can ask; it does not campaign.
     *
     * @return a stage of the leader, or of empty if no lease on {@code name} is live
     * @throws IllegalArgumentException if {@code name} is not a valid lock key (before any I/O)
     */
    public static CompletionStage<Optional<LeaderInfo>> currentLeader(AsyncLockClient locks, String name) {
        Objects.requireNonNull(locks, "locks");
        String key = LockKey.of(name).value();
        return locks.lookup(key).thenApply(info -> info.map(i -> new LeaderInfo(key, i.fence(), i.expiresAt())));
    }

    /** This face itself: the one that holds the candidate's state. */
    @Override
    public AsyncLeaderElection async() {
        return this;
    }

    /** The name campaigned for. */
    @Override
    public String name() {
        return name;
    }

    /** Starts campaigning; does nothing if already started. Returns at once: campaigning needs no thread. */
    @Override
    public void start() {
        long gen;
        synchronized (guard) {
            if (running) {
                return;
            }
            running = true;
            gen = ++generation;
        }
        campaign(gen);
    }

    /** Whether this candidate has been started and not stopped. */
    @Override
    public boolean isRunning() {
        synchronized (guard) {
            return running;
        }
    }

    /** Whether this process leads now, by its own view ({@link Leadership#isValid()}). */
    @Override
    public boolean isLeader() {
        return leadership().isPresent();
    }

    /** The current term if this process leads now, by its own view. */
    @Override
    public Optional<Leadership> leadership() {
        Leadership l;
        synchronized (guard) {
            l = current;
        }
        return l != null && l.isValid() ? Optional.of(l) : Optional.empty();
    }

    /**
     * Same as {@link #currentLeader(AsyncLockClient, String)} for this candidate's name.
     *
     * @return a stage of the leader, or of empty if no lease on the name is live
     */
    public CompletionStage<Optional<LeaderInfo>> currentLeader() {
        return currentLeader(locks, name);
    }

    /**
     * Gives up the current term, if any, so that another candidate can lead, and keeps campaigning:
     * this candidate campaigns again only after the retry delay, to let the others in first. The
     * listener hears {@link LeadershipListener.Revocation#RESIGNED} before the lock is released.
     *
     * @return a stage that completes when the lock has been released (or the release failed and the
     *     lock is left to expire at its TTL); at once if this process does not lead
     */
    public CompletionStage<Void> resign() {
        return endTerm(LeadershipListener.Revocation.RESIGNED);
    }

    /**
     * Stops campaigning, and resigns if this process leads (the listener hears
     * {@link LeadershipListener.Revocation#STOPPED}). A grant that arrives after the stop is released.
     *
     * @return a stage that completes when the lock, if held, has been released (or the release failed
     *     and the lock is left to expire at its TTL)
     */
    public CompletionStage<Void> stop() {
        CompletableFuture<?> waiting;
        synchronized (guard) {
            if (!running) {
                return CompletableFuture.completedFuture(null);
            }
            running = false;
            generation++;
            waiting = current == null ? campaign : null;
            cancel(retry);
        }
        if (waiting != null) {
            waiting.cancel(false); // the lock client releases a grant that arrives after this
            return CompletableFuture.completedFuture(null);
        }
        return endTerm(LeadershipListener.Revocation.STOPPED);
    }

    /** Whether the calling thread is running a listener call now: a wait there would wait for itself. */
    boolean inListener() {
        return Thread.currentThread() == drainingThread;
    }

    @Override
    public String toString() {
        Leadership l = leadership().orElse(null);
        return "AsyncLeaderElection[" + name + (l == null ? ", not leading" : ", leading in term " + l.term().value()) + "]";
    }

    // --- the campaign ---

    private void campaign(long gen) {
        CompletableFuture<Optional<Boolean>> stage;
        try {
            stage = locks.withLock(name, ttl, campaignWait, lease -> lead(gen, lease)).toCompletableFuture();
        } catch (RuntimeException e) {
            afterTerm(gen, null, e); // never expected: the arguments were checked by the builder
            return;
        }
        synchronized (guard) {
            if (gen == generation) {
                campaign = stage;
            }
        }
        stage.whenComplete((term, error) -> afterTerm(gen, term, error));
    }

    /** The work done under the lock: a stage that completes (with true) when the term ends, and the lock is then released. */
    private CompletionStage<Boolean> lead(long gen, Lease lease) {
        Leadership term = new Leadership(name, lease);
        CompletableFuture<Boolean> end = new CompletableFuture<>();
        synchronized (guard) {
            if (gen != generation) {
                return CompletableFuture.completedFuture(true); // stopped meanwhile: release at once
            }
            if (!lease.isValid()) {
                // Ran out between the grant and now: a term that is already over is never announced.
                log.info("leadership '{}': the lease of term {} ran out before it could be announced; campaigning again",
                        name, term.term().value());
                return CompletableFuture.completedFuture(false);
            }
            current = term;
            termEnd = end;
            endingBecause = null;
            // Queued under the guard, so that nothing about this term (its revocation) can be queued before it.
            callbacks.add(() -> events.publish(new LeaderEvent.Elected(term)));
        }
        lease.whenLost().thenAccept(cause -> endTerm(term, revocation(cause))); // queued after the election, whatever the thread
        drainCallbacks();
        return end;
    }

    /** Ends the current term for {@code why}; the lock client then releases the lease. */
    private CompletionStage<Void> endTerm(LeadershipListener.Revocation why) {
        Leadership term;
        CompletableFuture<?> released;
        synchronized (guard) {
            term = current;
            released = campaign;
        }
        if (term == null) {
            return CompletableFuture.completedFuture(null);
        }
        endTerm(term, why);
        return released == null ? CompletableFuture.completedFuture(null) : released.handle((v, e) -> null);
    }

    private void endTerm(Leadership term, LeadershipListener.Revocation why) {
        if (!term.end()) {
            return;
        }
        CompletableFuture<Boolean> end;
        synchronized (guard) {
            end = current == term ? termEnd : null;
            if (current == term) {
                endingBecause = why;
            }
        }
        callbacks.add(() -> {
            try {
                events.publish(new LeaderEvent.Revoked(term, why));
            } finally {
                if (end != null) {
                    end.complete(true); // after revoked returned: the work stops before another leader starts
                }
            }
        });
        drainCallbacks();
    }

    /**
     * Runs the queued listener calls one at a time, in the order they were queued, on whichever thread finds
     * none running: elected and revoked never overlap, and a term's revocation never comes before its election,
     * whatever threads (the lock client's timer, a backend's callback thread, a caller of resign) end the term.
     */
    private void drainCallbacks() {
        if (draining.getAndIncrement() != 0) {
            return; // the thread running calls now runs this one too, after the ones before it
        }
        int missed = 1;
        drainingThread = Thread.currentThread();
        do {
            Runnable call;
            while ((call = callbacks.poll()) != null) {
                tell(call);
            }
            drainingThread = null; // before the count drops: another thread may take over at once
            missed = draining.addAndGet(-missed);
            if (missed != 0) {
                drainingThread = Thread.currentThread();
            }
        } while (missed != 0);
    }

    private void afterTerm(long gen, Optional<Boolean> term, Throwable error) {
        Duration delay;
        synchronized (guard) {
            LeadershipListener.Revocation why = endingBecause;
            current = null;
            termEnd = null;
            endingBecause = null;
            if (gen != generation || !running) {
                return;
            }
            if (error != null) {
                log.warn("leadership '{}': campaign failed, retrying: {}", name, Redacted.describe(error));
                delay = jittered(retryDelay);
            } else if (term.isPresent() && why == LeadershipListener.Revocation.RESIGNED) {
                delay = jittered(retryDelay); // let the other candidates in first
            } else {
                delay = Duration.ZERO; // lost, or not elected within the campaign wait: campaign on
            }
            if (!delay.isZero()) {
                retry = time.schedule(delay, () -> campaign(gen));
                return;
            }
        }
        campaign(gen);
    }

    private static LeadershipListener.Revocation revocation(LossCause cause) {
        return switch (cause) {
            case TAKEN_OVER -> LeadershipListener.Revocation.TAKEN_OVER;
            case UNREACHABLE -> LeadershipListener.Revocation.UNREACHABLE;
            case EXPIRED -> LeadershipListener.Revocation.EXPIRED;
        };
    }

    private static Duration jittered(Duration d) {
        // between half and all of d, so candidates that failed together do not come back together
        long nanos = d.toNanos();
        return Duration.ofNanos(nanos / 2 + ThreadLocalRandom.current().nextLong(nanos / 2 + 1));
    }

    private static void cancel(Future<?> f) {
        if (f != null) {
            f.cancel(false);
        }
    }

    private void tell(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException | AssertionError | LinkageError e) { // the calls after it must still run
            // The stream isolates its subscribers; this guards the queue against the rest of a call.
            log.warn("a queued call of leadership '{}' threw; ignored", name, e);
        }
    }
}
