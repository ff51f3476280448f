package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Runs the samples of docs/zookeeper.md and of the zookeeper module's Javadoc on an in-process ZooKeeper (curator-test). */
class ZooKeeperSamplesTest {

    private static TestingServer server;
    private static CuratorFramework curator;

    @BeforeAll
    static void start() throws Exception {
        server = new TestingServer(true);
        curator = CuratorFrameworkFactory.newClient(server.getConnectString(), 20_000, 10_000, new RetryOneTime(100));
        curator.start();
        curator.blockUntilConnected();
    }

    @AfterAll
    static void stop() throws Exception {
        curator.close();
        server.close();
    }

    @Test
    void theSetUpTakesALockWithAFence() throws Exception {
        LockClient locks = ZooKeeperSamples.docSetUp(server.getConnectString());
        try (Lease lease = locks.acquire("setup", Duration.ofSeconds(10), Duration.ofSeconds(5)).orElseThrow()) {
            assertThat(lease.fence().value()).isPositive();
        }
    }

    @Test
    void theJavadocSamplesShipUnderTheLockWithRisingFences() throws Exception {
        ZooKeeperSamples.Orders orders = new ZooKeeperSamples.Orders();
        assertThat(ZooKeeperSamples.javadocEntry(curator, orders)).contains(true);
        long first = orders.shipped.get(42L).value();
        orders.shipped.clear();
        ZooKeeperSamples.javadocLockBackend(curator, orders);
        assertThat(orders.shipped.get(42L).value()).as("a later grant's czxid").isGreaterThan(first);
    }
}
