package dev.fenceguard.core.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.leader.Candidates.Candidate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Five candidates on one manual clock: every step is driven by the test, nothing by real time. */
@Timeout(60) // a guard against a hang, not a timing assertion
class LeaderElectionTest {

    private static final String NAME = "billing-scheduler";

    private final Candidates five = new Candidates(5, NAME);

    /** A resource that keeps the write rule, as a fenced table or key would. */
    private final AtomicLong storedTerm = new AtomicLong();

    private boolean write(Candidate c) {
        long term = c.term().value();
        return storedTerm.getAndUpdate(s -> FencePolicy.SAME_OR_NEWER.admits(term, s) ? term : s) <= term;
    }

    private Candidate startAllAndFindTheLeader() {
        five.all.forEach(c -> c.election.start());
        five.advance(Duration.ofSeconds(1));
        assertThat(five.leaders()).as("exactly one of five leads").hasSize(1);
        return five.leaders().get(0);
    }

    @Test
    void oneOfFiveLeadsAndEveryoneSeesItsTerm() {
        Candidate leader = startAllAndFindTheLeader();
        assertThat(leader.events).containsExactly("elected " + leader.term().value());
        LeaderInfo seen = five.get((leader.id + 1) % 5).election.currentLeader().orElseThrow();
        assertThat(seen.term()).isEqualTo(leader.term());
        assertThat(seen.name()).isEqualTo(NAME);
        assertThat(seen.expiresAt()).isEqualTo(leader.election.leadership().orElseThrow().expiresAt());

        five.advance(Duration.ofMinutes(2));
        assertThat(five.leaders()).as("the leader renews: still the same one two minutes (8 TTLs) on").containsExactly(leader);
        assertThat(five.elections).hasSize(1);
    }

    @Test
    void theBlockingAndAsyncFacesAreOneCandidate() {
        Candidate c = five.get(0);
        LeaderCandidate async = c.election.async();
        assertThat(async.async()).isSameAs(async);
        assertThat(c.election.isRunning()).isFalse();
        async.start(); // started through one face: running on both
        assertThat(c.election.isRunning()).isTrue();
        five.advance(Duration.ofSeconds(1));
        assertThat(List.<LeaderCandidate>of(c.election, async)).allSatisfy(face -> {
            assertThat(face.name()).isEqualTo(NAME);
            assertThat(face.isLeader()).as("the only candidate started leads").isTrue();
            assertThat(face.leadership().orElseThrow().term()).isEqualTo(c.term());
        });
        c.election.stop();
        assertThat(async.isRunning()).isFalse();
        assertThat(async.isLeader()).isFalse();
    }

    @Test
    void resigningHandsTheTermToAnotherCandidateWithAGreaterTerm() {
        Candidate first = startAllAndFindTheLeader();
        long firstTerm = first.term().value();
        first.election.resign();
        assertThat(first.events).containsExactly("elected " + firstTerm, "revoked " + firstTerm + " RESIGNED");
        assertThat(first.election.isLeader()).isFalse();
        assertThat(first.election.isRunning()).as("a resigned candidate campaigns on").isTrue();

        five.advance(Duration.ofSeconds(2));
        assertThat(five.leaders()).hasSize(1);
        Candidate second = five.leaders().get(0);
        assertThat(second).as("the others get in first").isNotEqualTo(first);
        assertThat(second.term().value()).isGreaterThan(firstTerm);
    }

    @Test
    void aPausedLeaderIsToldWithinOneTtlAndItsLaterWritesAreStale() {
        Candidate zombie = startAllAndFindTheLeader();
        assertThat(write(zombie)).isTrue();
        zombie.link.freeze(); // a GC pause or a partition: its renewals get no answer

        five.advance(Candidates.TTL);
        assertThat(zombie.election.isLeader()).as("told within one TTL").isFalse();
        assertThat(zombie.events).last().asString().startsWith("revoked " + zombie.term().value());

        five.advance(Duration.ofSeconds(2));
        assertThat(five.leaders()).hasSize(1);
        Candidate successor = five.leaders().get(0);
        assertThat(successor.term().value()).isGreaterThan(zombie.term().value());
        assertThat(write(successor)).isTrue();

        zombie.link.thaw(); // the pause ends: late answers arrive, and the zombie writes with its old term
        assertThat(write(zombie)).as("the deposed leader's write is refused").isFalse();
        assertThat(storedTerm).hasValue(successor.term().value());
        assertThat(five.leaders()).containsExactly(successor);
    }

    @Test
    void electionsTheCurrentTermAndLostTermsAreMetered() {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        Candidates two = new Candidates(2, "metered", dev.fenceguard.core.micrometer.MicrometerLeaderMetrics.of(registry));
        two.all.forEach(c -> c.election.start());
        two.advance(Duration.ofSeconds(1));
        Candidate first = two.leaders().get(0);
        assertThat(registry.get("fenceguard.leader.elections").tag("leadership", "metered").counter().count()).isEqualTo(1);
        assertThat(registry.get("fenceguard.leader.term").tag("leadership", "metered").gauge().value()).isEqualTo(first.term().value());

        first.election.resign();
        two.advance(Duration.ofSeconds(1));
        Candidate second = two.leaders().get(0);
        assertThat(second).isNotSameAs(first);
        assertThat(registry.get("fenceguard.leader.term").gauge().value()).isEqualTo(second.term().value());
        assertThat(registry.find("fenceguard.leader.renew.failures").counters()).as("a resignation is no failure").isEmpty();

        second.link.freeze(); // its renewals get no answer: the term is taken from it
        two.advance(Candidates.TTL.plusSeconds(3));
        assertThat(second.election.isLeader()).isFalse();
        assertThat(registry.get("fenceguard.leader.renew.failures").tag("leadership", "metered").counter().count()).isEqualTo(1);
        assertThat(registry.get("fenceguard.leader.elections").counter().count()).isEqualTo(3);
        assertThat(registry.get("fenceguard.leader.term").gauge().value()).isEqualTo(first.term().value());
        second.link.thaw();
        two.all.forEach(c -> c.election.stop());
        assertThat(registry.get("fenceguard.leader.term").gauge().value()).as("nobody here leads").isZero();
    }

    @Test
    void aKilledLeaderIsReplacedAfterItsTtlAndNeverBefore() {
        Candidate killed = startAllAndFindTheLeader();
        killed.link.freeze(); // never thawed: a crashed process
        five.advance(Candidates.TTL.minusSeconds(2)); // the lock was taken 1 s ago, when all started
        assertThat(five.all).filteredOn(c -> c != killed).noneMatch(c -> c.election.isLeader());
        assertThat(five.truth(NAME)).as("the backend still holds the dead leader's lock").isPresent();
        five.advance(Duration.ofSeconds(3));
        assertThat(five.leaders()).hasSize(1).doesNotContain(killed);
    }

    @Test
    void stopReleasesTheLockAndStopsCampaigning() {
        Candidate leader = startAllAndFindTheLeader();
        long term = leader.term().value();
        leader.election.stop();
        assertThat(leader.events).containsExactly("elected " + term, "revoked " + term + " STOPPED");
        assertThat(leader.election.isRunning()).isFalse();
        five.advance(Duration.ofMinutes(1));
        assertThat(five.leaders()).hasSize(1).doesNotContain(leader);
        assertThat(leader.events).as("a stopped candidate is never elected again").hasSize(2);
    }

    @Test
    void stoppingWhileCampaigningLeavesNoLockBehind() {
        Candidates one = new Candidates(1, NAME);
        Candidate c = one.get(0);
        c.link.freeze(); // the grant will arrive after the stop
        c.election.start();
        c.election.stop();
        c.link.thaw();
        assertThat(c.election.isLeader()).isFalse();
        assertThat(c.events).isEmpty();
        assertThat(one.truth(NAME)).as("the late grant was released").isEmpty();
    }

    @Test
    void aFailingListenerDoesNotStopTheElection() {
        Candidates one = new Candidates(1, NAME);
        LeaderElection e = LeaderElection.builder(one.get(0).client, "other").withTimeSource(one.time)
                .onEvents(new LeadershipListener() {
                    @Override
                    public void elected(Leadership l) {
                        throw new IllegalStateException("listener bug");
                    }
                }).build();
        e.start();
        assertThat(e.isLeader()).isTrue();
        e.close();
        assertThat(one.truth("other")).isEmpty();
    }

    @Test
    void badInputFailsBeforeAnyIo() {
        Candidates one = new Candidates(1, NAME);
        LockClient client = one.get(0).client;
        List<Runnable> tried = List.of(
                () -> LeaderElection.builder(client, ""),
                () -> LeaderElection.builder(client, "a\0b"),
                () -> LeaderElection.builder(client, "x".repeat(513)),
                () -> LeaderElection.builder(client, NAME).withTtl(Duration.ZERO),
                () -> LeaderElection.builder(client, NAME).withTtl(Duration.ofSeconds(-1)),
                () -> LeaderElection.builder(client, NAME).withCampaignWait(Duration.ZERO),
                () -> LeaderElection.builder(client, NAME).withRetryDelay(Duration.ZERO),
                () -> LeaderElection.builder(client, NAME).withRetryDelay(Duration.ofDays(1)),
                () -> LeaderElection.currentLeader(client, ""));
        for (Runnable attempt : tried) {
            assertThatThrownBy(attempt::run).isInstanceOf(IllegalArgumentException.class).message().isNotBlank();
        }
        assertThatThrownBy(() -> LeaderElection.builder(null, NAME)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> LeaderElection.builder(client, NAME).onEvents(null)).isInstanceOf(NullPointerException.class);
        assertThat(one.get(0).link.calls()).as("no call reached the backend").isZero();
    }
}
