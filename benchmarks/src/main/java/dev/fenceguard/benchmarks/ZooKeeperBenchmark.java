package dev.fenceguard.benchmarks;

import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.zookeeper.FenceGuardZooKeeper;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;

/**
 * ZooKeeper benchmark of issue #32 on an in-process curator-test {@code TestingServer}: fence-guard's
 * acquire + release against Curator's own {@code InterProcessMutex} (curator-recipes; {@code acquire} and
 * {@code release} of one mutex per lock path, uncontended), and against that recipe's uncontended requests
 * written out with curator-framework's calls ({@code create EPHEMERAL_SEQUENTIAL} under the lock's path,
 * {@code getChildren} to see it is first, {@code delete}: the recipe's floor). Same server, same client, same
 * threads, alternating rounds; ratios against the real mutex. Arguments:
 * {@code [seconds-per-phase=5] [threads=4] [rounds=3]}.
 */
public final class ZooKeeperBenchmark {

    public static void main(String[] args) throws Exception {
        Harness.Args cli = Harness.Args.of(args, 5, 4, 3);
        try (TestingServer server = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 500, 0,
                Map.of("maxSessionTimeout", "60000")), true);
                CuratorFramework client = CuratorFrameworkFactory.newClient(server.getConnectString(), 60_000, 10_000,
                        new RetryOneTime(100))) {
            client.start();
            client.blockUntilConnected();
            BlockingBackend backend = BlockingBackend.of(FenceGuardZooKeeper.builder(client).withRootPath("/bench/fence-guard").build()
                    .lockBackend());
            Duration ttl = Duration.ofSeconds(30);
            for (int i = 0; i < 800; i++) { // every key node exists, as after warm use (a key's first use also creates its node)
                LockKey k = LockKey.of("bench:" + i / 200 + ":" + i % 200);
                LockId id = LockId.random();
                backend.tryAcquire(k, id, ttl).orElseThrow();
                backend.release(k, id);
            }
            InterProcessMutex[][] mutexes = new InterProcessMutex[cli.threads()][200];
            for (int t = 0; t < cli.threads(); t++) {
                for (int i = 0; i < 200; i++) {
                    client.create().creatingParentsIfNeeded().forPath("/bench/mutex/m" + t + "-" + i);
                    // As the recipe is used: one mutex per lock path, kept; its lock path exists after the first use.
                    mutexes[t][i] = new InterProcessMutex(client, "/bench/recipe/m" + t + "-" + i);
                    mutexes[t][i].acquire();
                    mutexes[t][i].release();
                }
            }
            System.out.printf(Locale.ROOT, "ZooKeeper %s (in-process TestingServer), %d threads, %.1f s per phase, %d alternating rounds,"
                    + " median of rounds%n%n", org.apache.zookeeper.Version.getFullVersion(), cli.threads(), cli.seconds(), cli.rounds());

            Harness h = new Harness(cli.threads(), cli.seconds());
            Harness.Op fenceGuard = (t, i) -> {
                LockKey k = LockKey.of("bench:" + t + ":" + (i % 200));
                LockId id = LockId.random();
                backend.tryAcquire(k, id, ttl).orElseThrow();
                if (!backend.release(k, id)) {
                    throw new IllegalStateException("release of a live lease answered false");
                }
            };
            Harness.Op mutexRequests = (t, i) -> {
                String lock = "/bench/mutex/m" + t + "-" + (i % 200);
                String node = client.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(lock + "/_c_lock-", new byte[0]);
                List<String> children = client.getChildren().forPath(lock);
                if (children.size() != 1 || !node.endsWith(children.get(0))) {
                    throw new IllegalStateException("uncontended lock node not first: " + children);
                }
                client.delete().forPath(node);
            };
            Harness.Op recipe = (t, i) -> {
                InterProcessMutex mutex = mutexes[t][(int) (i % 200)];
                if (!mutex.acquire(10, java.util.concurrent.TimeUnit.SECONDS)) {
                    throw new IllegalStateException("uncontended InterProcessMutex not acquired");
                }
                mutex.release();
            };
            h.measure(fenceGuard);
            h.measure(recipe);
            h.measure(mutexRequests);
            List<List<Harness.Phase>> rounds = h.compare(cli.rounds(), List.of(fenceGuard, recipe, mutexRequests));
            for (int r = 0; r < cli.rounds(); r++) {
                double ours = rounds.get(0).get(r).opsPerSecond();
                System.out.printf(Locale.ROOT, "round %d: fence-guard %8.0f/s, InterProcessMutex %8.0f/s (%.2fx), its requests by hand"
                        + " %8.0f/s (%.2fx)%n", r + 1, ours, rounds.get(1).get(r).opsPerSecond(), ours / rounds.get(1).get(r).opsPerSecond(),
                        rounds.get(2).get(r).opsPerSecond(), ours / rounds.get(2).get(r).opsPerSecond());
            }
            Harness.Phase a = Harness.median(rounds.get(0));
            List<String> names = List.of("fence-guard acquire+release pairs/s", "InterProcessMutex acquire+release",
                    "InterProcessMutex's requests by hand");
            System.out.println();
            for (int p = 0; p < names.size(); p++) {
                Harness.Phase m = Harness.median(rounds.get(p));
                System.out.printf(Locale.ROOT, "%-40s %8.0f/s  p50 %5d us  p99 %5d us  fence-guard / this %.2fx%n", names.get(p),
                        m.opsPerSecond(), m.p50Micros(), m.p99Micros(), a.opsPerSecond() / m.opsPerSecond());
            }
        }
    }
}
