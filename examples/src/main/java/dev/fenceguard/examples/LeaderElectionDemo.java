package dev.fenceguard.examples;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.leader.LeaderElection;
import dev.fenceguard.core.leader.Leadership;
import dev.fenceguard.core.leader.LeadershipListener;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.redis.FencedRedis;
import dev.fenceguard.testkit.PausableBackend;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Leader election on Redis, told as the zombie story: three scheduler nodes elect a leader that sends
 * the nightly invoice run. The leader stalls (its link to Redis is paused, as a long GC pause would);
 * it loses its term, another node is elected with a greater term and sends the run. The stalled node
 * wakes and sends too: its write carries the old term and is refused, so the run is recorded once.
 *
 * <p>Redis comes from {@code --redis redis://HOST:PORT}, else the test-server harness. Exits 1 if the
 * stale leader's write was applied.
 */
public final class LeaderElectionDemo {

    public static void main(String[] args) throws Exception {
        Quiet.apply();
        System.exit(run(args, System.out));
    }

    private record Node(String name, PausableBackend link, LeaderElection election, BlockingQueue<String> events) {
        Leadership term() {
            return election.leadership().orElseThrow();
        }

        String next() throws InterruptedException {
            String e = events.poll(60, TimeUnit.SECONDS);
            if (e == null) {
                throw new IllegalStateException(name + ": no election event within 60 s");
            }
            return e;
        }
    }

    public static int run(String[] args, PrintStream out) throws Exception {
        String uri = args.length == 2 && args[0].equals("--redis") ? args[1] : TestRedis.server().uri().toString();
        String prefix = "fence-guard-leader-demo:" + UUID.randomUUID().toString().substring(0, 8) + ":";
        RedisClient client = RedisClient.create(uri);
        List<Node> nodes = new ArrayList<>();
        try (StatefulRedisConnection<String, String> conn = client.connect();
                FenceGuardRedis fenceGuard = FenceGuardRedis.builder(conn).withKeyPrefix(prefix).withFenceKeyPrefix(prefix + "fence:")
                        .withMetrics(LockMetrics.none()).build()) {
            FencedRedis redis = fenceGuard.fencedWrites();
            String lastRun = prefix + "invoices:last-run";
            out.println("leader election demo on Redis at " + uri + ": three nodes, one nightly invoice run");
            BlockingQueue<Node> elected = new LinkedBlockingQueue<>();
            for (String name : List.of("node-a", "node-b", "node-c")) {
                // Each node is its own process in production; here each gets its own link, so one can stall alone.
                PausableBackend link = new PausableBackend(fenceGuard.lockBackend());
                LockClient locks = LockClient.builder(link).withMetrics(LockMetrics.none())
                        .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200)).build();
                BlockingQueue<String> events = new LinkedBlockingQueue<>();
                Node[] self = new Node[1];
                LeaderElection election = LeaderElection.builder(locks, "invoice-scheduler")
                        .withTtl(Duration.ofSeconds(2)).withRetryDelay(Duration.ofMillis(200))
                        .onEvents(new LeadershipListener() {
                            @Override
                            public void elected(Leadership term) {
                                events.add("elected");
                                elected.add(self[0]);
                            }

                            @Override
                            public void revoked(Leadership term, Revocation why) {
                                events.add("revoked (" + why + ")");
                            }
                        }).build();
                self[0] = new Node(name, link, election, events);
                nodes.add(self[0]);
            }
            nodes.forEach(n -> n.election().start());

            Node first = takeLeader(elected);
            first.next(); // its own "elected"
            FenceToken firstTerm = first.term().term();
            out.println(first.name() + " is elected, term " + firstTerm.value() + ", and sends tonight's run: "
                    + outcome(redis.set(lastRun, firstTerm, "sent by " + first.name())));

            first.link().pause();
            out.println(first.name() + " stalls (a long GC pause): its renewals get no answer");
            out.println(first.name() + " is told: " + first.next());
            Node second = takeLeader(elected);
            FenceToken secondTerm = second.term().term();
            out.println(second.name() + " is elected, term " + secondTerm.value() + " (greater), and sends the run: "
                    + outcome(redis.set(lastRun, secondTerm, "sent by " + second.name())));

            first.link().resume();
            WriteOutcome zombie = redis.set(lastRun, firstTerm, "sent by " + first.name());
            out.println(first.name() + " wakes and sends again with term " + firstTerm.value() + ": " + outcome(zombie));
            String recorded = conn.sync().get(lastRun);
            boolean ok = !zombie.isApplied() && ("sent by " + second.name()).equals(recorded);
            out.println("the run is recorded as '" + recorded + "': " + (ok ? "OK, sent once by the current leader" : "WRONG"));
            return ok ? 0 : 1;
        } finally {
            for (Node n : nodes) {
                n.link().resume();
                n.election().close();
            }
            try (StatefulRedisConnection<String, String> c = client.connect()) {
                List<String> keys = c.sync().keys(prefix + "*");
                if (!keys.isEmpty()) {
                    c.sync().del(keys.toArray(String[]::new));
                }
            }
            client.shutdown();
        }
    }

    private static Node takeLeader(BlockingQueue<Node> elected) throws InterruptedException {
        Node n = elected.poll(60, TimeUnit.SECONDS);
        if (n == null) {
            throw new IllegalStateException("no node was elected within 60 s");
        }
        return n;
    }

    private static String outcome(WriteOutcome o) {
        return o instanceof WriteOutcome.Stale s ? "Stale (the record holds term " + s.currentFence() + ")" : o.isApplied() ? "Applied" : o.toString();
    }
}
