package dev.fenceguard.reactor;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.leader.AsyncLeaderElection;
import dev.fenceguard.core.leader.LeaderCandidate;
import dev.fenceguard.core.leader.LeaderElection;
import dev.fenceguard.core.leader.LeaderInfo;
import dev.fenceguard.core.leader.LeadershipListener;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * The {@link Mono} face of a {@link LeaderElection}, over its {@link AsyncLeaderElection}: the same
 * candidate, with each operation that talks to the backend a lazy {@code Mono}. It adds no logic of its
 * own: the class comment of {@link LeaderElection} says how a candidate campaigns and leads, and its
 * {@link LeadershipListener} still tells of elections and revocations.
 *
 * <pre>{@code
 * ReactiveLeaderElection election = ReactiveLeaderElection.of(LeaderElection.builder(lockClient, "billing")
 *         .onEvents(billing)                         // your LeadershipListener: elected, revoked, with the term
 *         .build());
 * election.start();
 * Mono<LeaderInfo> leader = election.currentLeader();   // who leads now, and its term
 * Mono<Void> stopped = election.stop();      // completes once the lock, if held, is released
 * }</pre>
 *
 * <p><b>Cancellation</b> of {@link #resign()} or {@link #stop()} does not undo them: once subscribed, the
 * term ends and the lock is released whatever the subscriber does, so no lock is left held. Immutable
 * and thread-safe.
 *
 * @since 0.1
 */
public final class ReactiveLeaderElection implements LeaderCandidate {

    private final AsyncLeaderElection async;

    private ReactiveLeaderElection(AsyncLeaderElection async) {
        this.async = async;
    }

    /**
     * The Mono face of {@code election}: the same candidate.
     *
     * @throws NullPointerException if {@code election} is null
     */
    public static ReactiveLeaderElection of(LeaderElection election) {
        return new ReactiveLeaderElection(Objects.requireNonNull(election, "election").async());
    }

    /**
     * The current leader of {@code name}, as the backend sees it; see {@link LeaderElection#currentLeader(
     * dev.fenceguard.core.LockClient, String)}.
     *
     * @return a Mono of the leader, empty if no lease on {@code name} is live; it fails with a
     *     {@link FenceGuardException} if the backend fails
     * @throws IllegalArgumentException if {@code name} is not a valid lock key
     * @throws NullPointerException if an argument is null
     */
    public static Mono<LeaderInfo> currentLeader(ReactiveLockClient locks, String name) {
        Objects.requireNonNull(locks, "locks");
        LockKey.of(name);
        return Mono.fromFuture(() -> AsyncLeaderElection.currentLeader(locks.async(), name).toCompletableFuture())
                .flatMap(Mono::justOrEmpty);
    }

    /**
     * The current leader of this candidate's name, as the backend sees it.
     *
     * @return a Mono of the leader, empty if no lease on the name is live
     */
    public Mono<LeaderInfo> currentLeader() {
        return Mono.fromFuture(() -> async.currentLeader().toCompletableFuture()).flatMap(Mono::justOrEmpty);
    }

    /**
     * On subscription, gives up the current term, if any, and keeps campaigning; see {@link LeaderElection#resign()}.
     *
     * @return a Mono that completes when the lock has been released (or left to expire at its TTL)
     */
    public Mono<Void> resign() {
        return Mono.fromFuture(() -> async.resign().toCompletableFuture(), true);
    }

    /**
     * On subscription, stops campaigning and resigns if this process leads; see {@link LeaderElection#stop()}.
     *
     * @return a Mono that completes when the lock, if held, has been released (or left to expire at its TTL)
     */
    public Mono<Void> stop() {
        return Mono.fromFuture(() -> async.stop().toCompletableFuture(), true);
    }

    /** The asynchronous face this one wraps. */
    @Override
    public AsyncLeaderElection async() {
        return async;
    }

    @Override
    public String toString() {
        return async.toString().replaceFirst("^AsyncLeaderElection", "ReactiveLeaderElection");
    }
}
