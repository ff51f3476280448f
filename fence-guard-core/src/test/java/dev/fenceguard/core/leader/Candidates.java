package dev.fenceguard.core.leader;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.internal.ManualClock;
import dev.fenceguard.core.memory.FreezableLink;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Candidates as separate processes would be: each with its own lock client and its own link to one
 * shared in-memory backend, on one manual clock. A candidate's link can be frozen, as a paused process
 * or a partition would: its calls get no answer until thawed, and then answer late.
 */
final class Candidates {

    static final Duration TTL = Duration.ofSeconds(15);
    static final Duration RETRY = Duration.ofSeconds(2);

    final ManualClock time = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    final InMemoryLockBackend memory = new InMemoryLockBackend(time);
    final List<Candidate> all = new ArrayList<>();
    /** Every election seen by any candidate, in order: "elected i term". */
    final List<long[]> elections = new CopyOnWriteArrayList<>();

    private final LeaderMetrics metrics;

    Candidates(int n, String name) {
        this(n, name, LeaderMetrics.none());
    }

    /** Candidates whose elections report to {@code metrics} (as processes sharing one registry would). */
    Candidates(int n, String name, LeaderMetrics metrics) {
        this.metrics = metrics;
        for (int i = 0; i < n; i++) {
            all.add(new Candidate(i, name));
        }
    }

    Candidate get(int i) {
        return all.get(i);
    }

    List<Candidate> leaders() {
        return all.stream().filter(c -> c.election.isLeader()).toList();
    }

    Optional<LockInfo> truth(String name) {
        return memory.lookup(LockKey.of(name));
    }

    /** Advances the clock in one-second steps, so the tasks due meanwhile run at their own times. */
    void advance(Duration by) {
        for (long ms = by.toMillis(); ms > 0; ms -= 1000) {
            time.advance(Duration.ofMillis(Math.min(1000, ms)));
        }
    }

    final class Candidate {
        final int id;
        final FreezableLink link;
        final LockClient client;
        final LeaderElection election;
        final List<String> events = new CopyOnWriteArrayList<>();
        volatile Leadership lastTerm;

        Candidate(int id, String name) {
            this.id = id;
            this.link = new FreezableLink(memory);
            this.client = LockClient.builder(link).withTimeSource(time).withMetrics(LockMetrics.none())
                    .withCallTimeout(Duration.ofSeconds(5)).withBackoff(Duration.ofMillis(100), Duration.ofSeconds(1)).build();
            this.election = LeaderElection.builder(client, name).withTtl(TTL).withRetryDelay(RETRY)
                    .withCampaignWait(Duration.ofSeconds(30)).withTimeSource(time).withMetrics(metrics)
                    .onEvents(new LeadershipListener() {
                        @Override
                        public void elected(Leadership term) {
                            lastTerm = term;
                            events.add("elected " + term.term().value());
                            elections.add(new long[] {id, term.term().value()});
                        }

                        @Override
                        public void revoked(Leadership term, Revocation why) {
                            events.add("revoked " + term.term().value() + " " + why);
                        }
                    }).build();
        }

        FenceToken term() {
            return lastTerm.term();
        }

        void thawQuietly() {
            link.thaw();
        }

        @Override
        public String toString() {
            return "candidate " + id;
        }
    }
}
