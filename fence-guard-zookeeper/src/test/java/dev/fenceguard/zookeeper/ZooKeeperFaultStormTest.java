package dev.fenceguard.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.testkit.ZombieStorm;
import dev.fenceguard.testkit.servers.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.KillSession;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Zombie storms with faults. The counter (the guarded resource) is a {@link FencedZnode} on the same
 * ensemble, through a Curator client of its own; the faults hit the lock client: the ensemble's leader
 * killed and restarted (every client loses its connection through the election), the lock client's
 * session expired (by Curator's test utility on the client, then closed on the server, which deletes its
 * lease node at once), its connection cut and delayed through a loopback proxy. In each: no stale write
 * applied, no update lost, every error a mapped FenceGuardException of a lost connection, the storm
 * went on after the faults with fences no lower than before, and ends on its own. Size: 80 attempts, or
 * {@code -Dfenceguard.storm.attempts=N}.
 */
@Timeout(600) // a guard against a hang, not a timing assertion
class ZooKeeperFaultStormTest {

    @Test
    void theLeaderKilledAndRestartedMidStorm() throws Exception {
        int size = ZombieStorm.attemptsProperty(80);
        List<InstanceSpec> specs = List.of(TestZooKeeper.spec(1), TestZooKeeper.spec(2), TestZooKeeper.spec(3));
        try (TestingCluster cluster = new TestingCluster(specs)) {
            cluster.start();
            String root = TestZooKeeper.newRoot("leaderstorm");
            try (CuratorFramework lockClient = TestZooKeeper.newClient(cluster.getConnectString(), 10_000);
                    CuratorFramework resourceClient = TestZooKeeper.newClient(cluster.getConnectString(), 10_000)) {
                ZooKeeperLockBackend backend = FenceGuardZooKeeper.builder(lockClient).withRootPath(root).build().lockBackend();
                ZooKeeperStorms.Counter counter = new ZooKeeperStorms.Counter(resourceClient, root + "-counter");
                InstanceSpec[] killed = new InstanceSpec[1];
                ZombieStorm.Result r = ZooKeeperStorms.report("leader killed and restarted", ZooKeeperStorms.storm(backend, counter, size)
                        .withFault(size / 3, () -> {
                            killed[0] = specs.stream().filter(ZooKeeperLeaderFailoverTest::isLeader).findFirst().orElseThrow();
                            CountDownLatch reconnected = ZooKeeperLeaderFailoverTest.reconnectedLatch(lockClient);
                            assertThat(cluster.killServer(killed[0])).isTrue();
                            // the election is the fault: the storm goes on once the lock client is back
                            assertThat(reconnected.await(30, TimeUnit.SECONDS)).as("reconnected after the election").isTrue();
                            counter.phase(1);
                        })
                        .withFault(2 * size / 3, () -> {
                            counter.after(1);
                            assertThat(cluster.restartServer(killed[0])).isTrue();
                            counter.phase(2);
                        })
                        .build().run());
                ZooKeeperStorms.requireSafeThroughFaults(r, counter, 2, 2);
                assertThat(counter.highestFence(2) >>> 32).as("the new leader's epoch, in the fences after the faults")
                        .isGreaterThan(counter.highestFence(0) >>> 32);
            }
        }
    }

    @Test
    void theLockClientsSessionExpiredMidStorm() throws Exception {
        int size = ZombieStorm.attemptsProperty(80);
        String root = TestZooKeeper.newRoot("sessionstorm");
        String connect = TestZooKeeper.connectString();
        try (CuratorFramework lockClient = TestZooKeeper.newClient(connect, 10_000);
                CuratorFramework resourceClient = TestZooKeeper.newClient()) {
            ZooKeeperLockBackend backend = FenceGuardZooKeeper.builder(lockClient).withRootPath(root).build().lockBackend();
            ZooKeeperStorms.Counter counter = new ZooKeeperStorms.Counter(resourceClient, root + "-counter");
            ZombieStorm.Result r = ZooKeeperStorms.report("lock client's session expired", ZooKeeperStorms.storm(backend, counter, size)
                    .withFault(size / 3, () -> {
                        // the client is told its session expired; Curator opens a new one (the old one ends on the
                        // server at its timeout, and its lease node with it)
                        CountDownLatch newSession = ZooKeeperSessionTest.newSessionLatch(lockClient);
                        KillSession.kill(lockClient.getZookeeperClient().getZooKeeper());
                        assertThat(newSession.await(30, TimeUnit.SECONDS)).as("Curator's new session").isTrue();
                        counter.phase(1);
                    })
                    .withFault(2 * size / 3, () -> {
                        counter.after(1);
                        // the server ends the session: a second handle on it closes it, and its lease node goes at once
                        CountDownLatch newSession = ZooKeeperSessionTest.newSessionLatch(lockClient);
                        closeOnTheServer(connect, lockClient.getZookeeperClient().getZooKeeper());
                        assertThat(newSession.await(30, TimeUnit.SECONDS)).as("Curator's new session").isTrue();
                        counter.phase(2);
                    })
                    .build().run());
            ZooKeeperStorms.requireSafeThroughFaults(r, counter, 2, 2);
        }
    }

    @Test
    void theLockConnectionCutAndDelayedMidStorm() throws Exception {
        int size = ZombieStorm.attemptsProperty(80);
        String root = TestZooKeeper.newRoot("proxystorm");
        String[] target = TestZooKeeper.connectString().split(",")[0].split(":");
        try (TcpProxy proxy = TcpProxy.start(target[0], Integer.parseInt(target[1]));
                CuratorFramework lockClient = TestZooKeeper.newClient(proxy.hostPort(), 10_000);
                CuratorFramework resourceClient = TestZooKeeper.newClient()) {
            ZooKeeperLockBackend backend = FenceGuardZooKeeper.builder(lockClient).withRootPath(root).build().lockBackend();
            ZooKeeperStorms.Counter counter = new ZooKeeperStorms.Counter(resourceClient, root + "-counter");
            int delayed = size / 2;
            ZombieStorm.Result r = ZooKeeperStorms.report("lock connection cut and delayed", ZooKeeperStorms.storm(backend, counter, size)
                    .withFault(size / 4, () -> {
                        CountDownLatch reconnected = ZooKeeperLeaderFailoverTest.reconnectedLatch(lockClient);
                        proxy.cutConnections();
                        assertThat(reconnected.await(30, TimeUnit.SECONDS)).as("reconnected through the proxy").isTrue();
                        counter.phase(1);
                    })
                    // 30 ms each way: round trips eat part of the 150 ms lease (some grants arrive past it), for 10 attempts
                    .withFault(delayed, () -> {
                        counter.after(1);
                        proxy.delay(Duration.ofMillis(30));
                        counter.phase(2);
                    })
                    .withFault(delayed + 10, () -> {
                        counter.after(2);
                        proxy.delay(Duration.ZERO);
                        CountDownLatch reconnected = ZooKeeperLeaderFailoverTest.reconnectedLatch(lockClient);
                        proxy.cutConnections();
                        assertThat(reconnected.await(30, TimeUnit.SECONDS)).as("reconnected through the proxy").isTrue();
                        counter.phase(3);
                    })
                    .build().run());
            ZooKeeperStorms.requireSafeThroughFaults(r, counter, 3, 3);
        }
    }

    /** Closes {@code zk}'s session on the server, as an operator (or a server that expired it) would. */
    private static void closeOnTheServer(String connect, ZooKeeper zk) throws Exception {
        CountDownLatch joined = new CountDownLatch(1);
        ZooKeeper closer = new ZooKeeper(connect, 10_000, event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                joined.countDown();
            }
        }, zk.getSessionId(), zk.getSessionPasswd());
        try {
            assertThat(joined.await(30, TimeUnit.SECONDS)).as("the second handle joined the session").isTrue();
        } finally {
            closer.close(); // waits for the server's answer: the session and its ephemeral nodes are gone
        }
    }
}
