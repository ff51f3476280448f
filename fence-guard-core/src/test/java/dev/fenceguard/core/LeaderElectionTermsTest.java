package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.internal.ManualClock;
import dev.fenceguard.core.leader.LeaderElection;
import dev.fenceguard.core.leader.Leadership;
import dev.fenceguard.core.leader.LeadershipListener;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Leader election is never announced on an invalid lease, and its listener calls never overlap or come out of
 * order, whatever threads end a term. Driven on a manual clock with a backend whose answers the test holds back.
 */
@Timeout(60) // a guard against a hang, not a timing assertion
class LeaderElectionTermsTest {

    private static final Duration TTL = Duration.ofSeconds(3);

    private final ManualClock time = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final InMemoryLockBackend memory = new InMemoryLockBackend(time);
    private final ScriptedBackend backend = new ScriptedBackend(memory);
    private final LockClient client = LockClient.builder(backend).withTimeSource(time).withMetrics(LockMetrics.none()).build();
    private final List<String> events = new CopyOnWriteArrayList<>();

    private LeaderElection election(LeadershipListener listener) {
        return LeaderElection.builder(client, "leader").withTtl(TTL).withTimeSource(time).withMetrics(dev.fenceguard.core.leader.LeaderMetrics.none())
                .onEvents(listener).build();
    }

    private LeadershipListener recording() {
        return new LeadershipListener() {
            @Override
            public void elected(Leadership term) {
                events.add("elected " + term.term().value() + (term.isValid() ? "" : " (invalid)"));
            }

            @Override
            public void revoked(Leadership term, Revocation why) {
                events.add("revoked " + term.term().value() + " " + why);
            }
        };
    }

    @Test
    void aGrantThatArrivesAfterItsTtlElectsNobodyAndTheCandidateCampaignsOn() {
        LeaderElection election = election(recording());
        backend.hangAcquire = true;
        election.start();
        time.advance(Duration.ofMillis(3_500)); // the backend stalls past the TTL, within the call timeout
        backend.hangAcquire = false;
        backend.answerHungCalls(); // term 1 granted, already over
        assertThat(events).as("no term announced that is already over").isEmpty();
        time.advance(Duration.ofSeconds(1)); // the campaign's next attempt
        assertThat(events).containsExactly("elected 2");
        assertThat(election.leadership()).hasValueSatisfying(l -> assertThat(l.term().value()).isEqualTo(2));
        election.stop();
        assertThat(events).containsExactly("elected 2", "revoked 2 STOPPED");
    }

    @Test
    void closingFromTheElectedCallbackRevokesAfterItReturnsWithoutWaitingForItself() {
        AtomicReference<LeaderElection> self = new AtomicReference<>();
        LeaderElection election = election(new LeadershipListener() {
            @Override
            public void elected(Leadership term) {
                events.add("elected " + term.term().value());
                self.get().close(); // would wait for the revocation queued behind this very call
                events.add("closed");
            }

            @Override
            public void revoked(Leadership term, Revocation why) {
                events.add("revoked " + term.term().value() + " " + why);
            }
        });
        self.set(election);
        election.start();
        assertThat(events).containsExactly("elected 1", "closed", "revoked 1 STOPPED");
        assertThat(client.lookup("leader")).as("released after the revocation").isEmpty();
    }

    @Test
    void aTermThatEndsWhileItsElectionIsBeingAnnouncedIsRevokedAfterItNeverDuring() throws Exception {
        CountDownLatch inElected = new CountDownLatch(1);
        CountDownLatch letElectedReturn = new CountDownLatch(1);
        AtomicBoolean electedRunning = new AtomicBoolean();
        AtomicBoolean overlapped = new AtomicBoolean();
        LeaderElection election = election(new LeadershipListener() {
            @Override
            public void elected(Leadership term) {
                electedRunning.set(true);
                events.add("elected " + term.term().value());
                inElected.countDown();
                try {
                    letElectedReturn.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                electedRunning.set(false);
            }

            @Override
            public void revoked(Leadership term, Revocation why) {
                if (electedRunning.get()) {
                    overlapped.set(true);
                }
                events.add("revoked " + term.term().value() + " " + why);
            }
        });
        backend.hangAcquire = true;
        election.start();
        backend.hangAcquire = false;
        Thread answering = new Thread(backend::answerHungCalls, "backend-callback"); // the grant, and elected, on this thread
        answering.start();
        assertThat(inElected.await(30, TimeUnit.SECONDS)).isTrue();
        backend.failExtend = true;
        time.advance(Duration.ofSeconds(4)); // renewals fail; the lease's deadline passes; the term ends on this thread
        assertThat(overlapped).as("revoked ran while elected was still running").isFalse();
        assertThat(events).as("the revocation waits for the election to be announced").containsExactly("elected 1");
        backend.failExtend = false;
        letElectedReturn.countDown();
        answering.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(overlapped).isFalse();
        assertThat(events).startsWith("elected 1", "revoked 1 UNREACHABLE");
        election.stop();
    }
}
