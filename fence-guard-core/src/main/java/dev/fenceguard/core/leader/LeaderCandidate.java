package dev.fenceguard.core.leader;

import java.util.Optional;

/**
 * What every face of one leader-election candidate answers at once, with no call to the backend: its name,
 * whether it campaigns, and whether it leads by its own view. {@link LeaderElection} (blocking),
 * {@link AsyncLeaderElection} (stages) and the reactor module's {@code ReactiveLeaderElection} (Monos) are
 * faces of one candidate, and each is a {@code LeaderCandidate}: code that only starts a candidate or reads its
 * leadership (a health check, a guard before scheduled work) can take any face. The operations that talk to the
 * backend ({@code currentLeader}, {@code resign}, {@code stop}) stay on each face, in its own style.
 *
 * <p>The candidate's state lives in its {@link #async()} face; the other faces answer from there.
 *
 * @since 0.1
 */
public interface LeaderCandidate {

    /** The non-blocking face of this candidate, which holds its state (for {@link AsyncLeaderElection}, itself). */
    AsyncLeaderElection async();

    /** The name campaigned for. */
    default String name() {
        return async().name();
    }

    /** Starts campaigning; does nothing if already started. Returns at once: campaigning needs no thread. */
    default void start() {
        async().start();
    }

    /** Whether this candidate has been started and not stopped. */
    default boolean isRunning() {
        return async().isRunning();
    }

    /** Whether this process leads now, by its own view ({@link Leadership#isValid()}). */
    default boolean isLeader() {
        return async().isLeader();
    }

    /** The current term if this process leads now, by its own view. */
    default Optional<Leadership> leadership() {
        return async().leadership();
    }
}
