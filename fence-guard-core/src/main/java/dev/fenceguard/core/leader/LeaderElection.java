package dev.fenceguard.core.leader;

import dev.fenceguard.core.AsyncLockClient;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.internal.Stages;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * One candidate for a named leadership. Candidates in any number of processes campaign for the same
 * name through the same lock backend; at most one holds a live lease at a time, by the backend's
 * clock. The leader's {@linkplain Leadership#term() term} is the fence of its lock: every new term is
 * strictly greater than the last, so a deposed leader that has not noticed yet (paused, partitioned)
 * has its writes refused by every fenced resource.
 *
 * <pre>{@code
 * LeaderElection election = LeaderElection.builder(lockClient, "billing-scheduler")
 *         .withTtl(Duration.ofSeconds(15))
 *         .onEvents(new LeadershipListener() {
 *             public void elected(Leadership term) { scheduler.startRunning(term); }
 *             public void revoked(Leadership term, Revocation why) { scheduler.stopRunning(); }
 *         })
 *         .build();
 * election.start();
 * }</pre>
 *
 * <p>In the scheduler, every write carries the term:
 *
 * <pre>{@code
 * void sendInvoice(long id, Leadership term) {
 *     invoices.on(dataSource).update(id, term.term(), Assignments.of("status", "sent")).orThrow();
 * }
 * }</pre>
 *
 * <p>A term is announced only on a valid lease: a grant that arrives after its TTL has run out is
 * released and the candidate campaigns on. While leading, the lock client renews the lease each time a
 * third of the time it has left has passed; if renewals are refused,
 * or not confirmed before the lease's local deadline (at most one TTL after the last confirmed one),
 * the term is revoked and the listener told. The candidate then campaigns again. Campaigning is a
 * lock acquire with the client's backoff (full jitter), so candidates that lose do not poll in step.
 * After a failure to reach the backend the candidate retries after a jittered delay.
 *
 * <p>This is the blocking face: {@link #resign()}, {@link #stop()} and {@link #currentLeader()} wait for
 * the backend; {@link #async()} gives the same candidate with those returning {@code CompletionStage}s
 * ({@link AsyncLeaderElection}). Campaigning and leading hold no thread in either face. Thread-safe.
 *
 * <p><b>Interrupts.</b> None of these waits throws {@link InterruptedException}, and an interrupt does
 * not end them: each is bounded (a lookup by the lock client's call timeout, a release by its release
 * timeout), so it returns or throws what the backend really answered, never a {@code TIMEOUT} it did not
 * cause, and then sets the thread's interrupt status again.
 *
 * @since 0.1
 */
public final class LeaderElection implements LeaderCandidate, AutoCloseable {

    private final AsyncLeaderElection async;

    private LeaderElection(AsyncLeaderElection async) {
        this.async = async;
    }

    /**
     * A builder for a candidate for {@code name} through {@code locks}. The name is a lock key: it must
     * be a valid one, and no other code may lock it.
     *
     * @throws IllegalArgumentException if {@code name} is not a valid lock key
     * @throws NullPointerException if an argument is null
     */
    public static Builder builder(LockClient locks, String name) {
        return new Builder(Objects.requireNonNull(locks, "locks").async(), name);
    }

    /**
     * The current leader of {@code name}, as the backend sees it: its term and expiry, never its lock
     * id. Anyone can ask; it does not campaign.
     *
     * @return the leader, or empty if no lease on {@code name} is live
     * @throws IllegalArgumentException if {@code name} is not a valid lock key (before any I/O)
     * @throws FenceGuardException if the backend fails or does not answer within the lock client's call timeout
     */
    public static Optional<LeaderInfo> currentLeader(LockClient locks, String name) {
        Objects.requireNonNull(locks, "locks");
        return Stages.awaitUninterruptibly(AsyncLeaderElection.currentLeader(locks.async(), name));
    }

    /** The non-blocking face of this candidate: the same candidate, its stages instead of waits. */
    @Override
    public AsyncLeaderElection async() {
        return async;
    }

    /**
     * Same as {@link #currentLeader(LockClient, String)} for this candidate's name.
     *
     * @throws FenceGuardException if the backend fails or does not answer within the lock client's call timeout
     */
    public Optional<LeaderInfo> currentLeader() {
        return Stages.awaitUninterruptibly(async.currentLeader());
    }

    /**
     * Gives up the current term, if any, so that another candidate can lead, and keeps campaigning:
     * this candidate campaigns again only after the retry delay, to let the others in first. The
     * listener hears {@link LeadershipListener.Revocation#RESIGNED} before the lock is released. Waits
     * until the lock has been released (or the release failed and the lock is left to expire at its TTL),
     * bounded by the lock client's release timeout; called from a {@link LeadershipListener} call it does
     * not wait, since the revocation runs after that call returns.
     */
    public void resign() {
        await(async.resign());
    }

    /**
     * Stops campaigning, and resigns if this process leads (the listener hears
     * {@link LeadershipListener.Revocation#STOPPED}). A grant that arrives after the stop is released.
     * Waits as {@link #resign()} does.
     */
    public void stop() {
        await(async.stop());
    }

    /** {@link #stop()}, which never fails: a release that fails or times out leaves the lock to expire at its TTL. */
    @Override
    public void close() {
        stop();
    }

    @Override
    public String toString() {
        return async.toString().replaceFirst("^AsyncLeaderElection", "LeaderElection");
    }

    /**
     * Waits for a resignation or stop, unless this thread runs a listener call (whose end the release waits
     * for). Those stages never fail, and end by the release timeout: an interrupt does not end the wait (see
     * the class comment).
     */
    private void await(CompletionStage<Void> released) {
        if (!async.inListener()) {
            Stages.awaitUninterruptibly(released);
        }
    }

    /**
     * Options of a {@link LeaderElection}. Defaults: TTL 15 s, campaign wait 1 min (the wait of each
     * acquire; the candidate campaigns again when it runs out), retry delay 1 s after a backend failure or
     * a resignation, no listener, the system clock, {@link LeaderMetrics#automatic()} metrics. Not thread-safe;
     * {@link #build()} copies.
     *
     * @since 0.1
     */
    public static final class Builder {
        // Package-private: AsyncLeaderElection copies them once, in its constructor (called by build()).
        final AsyncLockClient locks;
        final String name;
        Duration ttl = Duration.ofSeconds(15);
        Duration campaignWait = Duration.ofMinutes(1);
        Duration retryDelay = Duration.ofSeconds(1);
        LeadershipListener listener = new LeadershipListener() {};
        TimeSource time = TimeSource.system();
        LeaderMetrics metrics = LeaderMetrics.automatic();

        private Builder(AsyncLockClient locks, String name) {
            this.locks = Objects.requireNonNull(locks, "locks");
            this.name = LockKey.of(Objects.requireNonNull(name, "name")).value();
        }

        /**
         * The lease TTL of a term: a leader that stops renewing (crashed, paused, cut off) is replaced
         * after at most this long, and learns of it itself within the same time.
         */
        public Builder withTtl(Duration ttl) {
            this.ttl = Checks.ttl(ttl, name);
            return this;
        }

        /** How long one acquire of the campaign waits before it starts over; positive. */
        public Builder withCampaignWait(Duration wait) {
            Checks.maxWait(wait, name);
            if (wait.isZero()) {
                throw new IllegalArgumentException("campaign wait must be positive (leadership '" + name + "')");
            }
            this.campaignWait = wait;
            return this;
        }

        /** The delay, jittered down to half, before campaigning again after a backend failure or a resignation; positive. */
        public Builder withRetryDelay(Duration delay) {
            Objects.requireNonNull(delay, "retryDelay");
            if (delay.isNegative() || delay.isZero() || delay.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("retry delay must be positive and at most 1 h, was " + delay
                        + " (leadership '" + name + "')");
            }
            this.retryDelay = delay;
            return this;
        }

        /** Who is told of elections and revocations. */
        public Builder onEvents(LeadershipListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** The clock for retry delays; give the lock client's {@code ManualTimeSource} (fence-guard-testkit) in tests. */
        public Builder withTimeSource(TimeSource time) {
            this.time = Objects.requireNonNull(time, "time");
            return this;
        }

        /**
         * Where elections, the current term and lost terms are counted; default
         * {@link LeaderMetrics#automatic()}. See {@link dev.fenceguard.core.micrometer.MicrometerLeaderMetrics}
         * for the meters.
         *
         * @throws NullPointerException if {@code metrics} is null
         * @since 0.1
         */
        public Builder withMetrics(LeaderMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /** A stopped candidate with these settings; call {@link LeaderElection#start()}. */
        public LeaderElection build() {
            // AsyncLeaderElection copies every setting into its own final fields: this builder stays reusable.
            return new LeaderElection(new AsyncLeaderElection(this));
        }
    }
}
