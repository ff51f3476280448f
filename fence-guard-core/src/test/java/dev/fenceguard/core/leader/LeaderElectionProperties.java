package dev.fenceguard.core.leader;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.leader.Candidates.Candidate;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Leader election against a model: random histories of 3 to 5 candidates that start, stop, resign,
 * pause (their link frozen, answers arriving late on thaw), write with their term, while a manual clock
 * advances. After every step:
 * <ul>
 *   <li>at most one candidate believes it leads, and the backend agrees with that belief;</li>
 *   <li>terms handed out only grow;</li>
 *   <li>the leader of the moment holds the newest term, and its writes apply; it writes after every
 *       step, as a working leader would;</li>
 *   <li>a write applied to a fenced resource always carries the newest term handed out so far, so a
 *       deposed leader that writes late never overwrites its successor.</li>
 * </ul>
 * At the end, with every candidate running and reachable, one of them leads within two TTLs.
 */
class LeaderElectionProperties {

    enum Kind { ADVANCE, FREEZE, THAW, RESIGN, STOP, START, WRITE }

    record Step(Kind kind, int who, int seconds) {}

    @Provide
    Arbitrary<List<Step>> histories() {
        Arbitrary<Step> step = Combinators.combine(
                Arbitraries.frequencyOf(
                        net.jqwik.api.Tuple.of(6, Arbitraries.just(Kind.ADVANCE)),
                        net.jqwik.api.Tuple.of(2, Arbitraries.just(Kind.FREEZE)),
                        net.jqwik.api.Tuple.of(2, Arbitraries.just(Kind.THAW)),
                        net.jqwik.api.Tuple.of(1, Arbitraries.just(Kind.RESIGN)),
                        net.jqwik.api.Tuple.of(1, Arbitraries.just(Kind.STOP)),
                        net.jqwik.api.Tuple.of(2, Arbitraries.just(Kind.START)),
                        net.jqwik.api.Tuple.of(4, Arbitraries.just(Kind.WRITE))),
                Arbitraries.integers().between(0, 4),
                Arbitraries.integers().between(1, 20)).as(Step::new);
        return step.list().ofMinSize(1).ofMaxSize(40);
    }

    @Property(tries = 300)
    void oneLeaderAtATimeAndNoDeposedLeaderOverwritesItsSuccessor(
            @ForAll @IntRange(min = 3, max = 5) int n, @ForAll("histories") List<Step> history) {
        String name = "leader-prop";
        Candidates cs = new Candidates(n, name);
        cs.all.forEach(c -> c.election.start());
        long[] stored = {0};
        for (Step step : history) {
            Candidate c = cs.get(step.who() % n);
            switch (step.kind()) {
                case ADVANCE -> cs.advance(Duration.ofSeconds(step.seconds()));
                case FREEZE -> c.link.freeze();
                case THAW -> c.link.thaw();
                case RESIGN -> c.election.async().resign();
                case STOP -> c.election.async().stop();
                case START -> c.election.start();
                case WRITE -> {
                    // Any candidate that ever led writes with its last term: a zombie if it was deposed.
                    if (c.lastTerm != null && write(stored, c)) {
                        assertThat(c.term().value()).as("after %s: %s applied a write: only the newest term may", step, c)
                                .isEqualTo(newestTerm(cs));
                    }
                }
            }
            checkInvariants(cs, name, step);
            // The leader of the moment works (and writes) after every step, as a real one would.
            for (Candidate leader : cs.leaders()) {
                assertThat(leader.term().value()).as("after %s: a leader holds the newest term", step).isEqualTo(newestTerm(cs));
                assertThat(write(stored, leader)).as("after %s: the leader's write applies", step).isTrue();
            }
        }

        cs.all.forEach(c -> {
            c.link.thaw();
            c.election.start();
        });
        cs.advance(Candidates.TTL.multipliedBy(2).plus(Candidates.RETRY));
        assertThat(cs.leaders()).as("with every candidate running and reachable, one leads").hasSize(1);
        checkInvariants(cs, name, null);
        cs.all.forEach(c -> c.election.async().stop());
        cs.all.forEach(Candidate::thawQuietly);
        assertThat(cs.truth(name)).as("all stopped: nothing left locked").isEmpty();
    }

    private static boolean write(long[] stored, Candidate c) {
        long term = c.term().value();
        if (!FencePolicy.SAME_OR_NEWER.admits(term, stored[0])) {
            return false;
        }
        stored[0] = term;
        return true;
    }

    private static long newestTerm(Candidates cs) {
        return cs.elections.stream().mapToLong(e -> e[1]).max().orElse(0);
    }

    private static void checkInvariants(Candidates cs, String name, Step after) {
        List<Candidate> leaders = cs.leaders();
        assertThat(leaders).as("after %s: at most one leader", after).hasSizeLessThanOrEqualTo(1);
        if (!leaders.isEmpty()) {
            Candidate leader = leaders.get(0);
            Optional<LockInfo> truth = cs.truth(name);
            assertThat(truth).as("after %s: the backend holds the believed leader's lock", after).isPresent();
            assertThat(truth.get().fence()).isEqualTo(leader.election.leadership().orElseThrow().term());
        }
        long previous = 0;
        for (long[] e : cs.elections) {
            assertThat(e[1]).as("after %s: terms only grow", after).isGreaterThan(previous);
            previous = e[1];
        }
    }
}
