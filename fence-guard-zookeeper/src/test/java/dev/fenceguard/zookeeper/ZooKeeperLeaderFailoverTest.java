package dev.fenceguard.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.testkit.BlockingBackend;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A three-server in-process ensemble whose leader is killed while a lease is held: the holder either keeps
 * a lease that is still valid (its extend answers, with the same fence) or is told it lost it (its extend
 * answers empty), never anything in between; and every fence issued after the election is above every
 * fence issued before it (the new leader's epoch is in the zxid's high bits).
 */
@Timeout(180) // a guard against a hang, not a timing assertion
class ZooKeeperLeaderFailoverTest {

    @Test
    void aLeaseHeldWhileTheLeaderDiesIsKeptOrReportedLostAndLaterFencesAreAboveEarlierOnes() throws Exception {
        List<InstanceSpec> specs = List.of(TestZooKeeper.spec(1), TestZooKeeper.spec(2), TestZooKeeper.spec(3));
        try (TestingCluster cluster = new TestingCluster(specs)) {
            cluster.start();
            try (CuratorFramework client = TestZooKeeper.newClient(cluster.getConnectString(), 20_000)) {
                BlockingBackend locks = BlockingBackend.of(FenceGuardZooKeeper.builder(client)
                        .withRootPath(TestZooKeeper.newRoot("failover")).build().lockBackend());
                LockKey held = LockKey.of("held");
                LockKey other = LockKey.of("other");
                LockId holder = LockId.random();
                Grant before = locks.tryAcquire(held, holder, Duration.ofSeconds(15)).orElseThrow();
                long highestBefore = before.fence();
                for (int i = 0; i < 5; i++) { // a few more fences on another key under the old leader
                    LockId id = LockId.random();
                    highestBefore = Math.max(highestBefore, locks.tryAcquire(other, id, Duration.ofSeconds(15)).orElseThrow().fence());
                    assertThat(locks.release(other, id)).isTrue();
                }

                InstanceSpec leader = specs.stream().filter(ZooKeeperLeaderFailoverTest::isLeader).findFirst().orElseThrow();
                CountDownLatch reconnected = reconnectedLatch(client);
                assertThat(cluster.killServer(leader)).isTrue();
                // Every client loses its connection when the leader goes (a follower without a leader closes its
                // clients' connections too), and gets one back once a new leader leads: call after that.
                assertThat(reconnected.await(120, TimeUnit.SECONDS)).as("Curator reconnected after the election").isTrue();

                Optional<Instant> extended = locks.extend(held, holder, Duration.ofSeconds(15));
                if (extended.isPresent()) {
                    Optional<LockInfo> info = locks.lookup(held);
                    assertThat(info).as("a kept lease keeps its fence").map(i -> i.fence().value()).contains(before.fence());
                    assertThat(locks.release(held, holder)).as("a kept lease is released").isTrue();
                } else {
                    assertThat(locks.release(held, holder)).as("a lost lease cannot be released").isFalse();
                }
                Grant after = locks.tryAcquire(held, LockId.random(), Duration.ofSeconds(15)).orElseThrow();
                Grant afterOther = locks.tryAcquire(other, LockId.random(), Duration.ofSeconds(15)).orElseThrow();
                long highest = highestBefore;
                assertThat(List.of(after.fence(), afterOther.fence())).as("fences after the election, above %d", highest)
                        .allMatch(f -> f > highest);
                assertThat(after.fence() >>> 32).as("the new leader's epoch").isGreaterThan(before.fence() >>> 32);
            }
        }
    }

    /** Counts down when Curator next reports its connection back (RECONNECTED: the same session, or a new one). */
    static CountDownLatch reconnectedLatch(CuratorFramework client) {
        CountDownLatch reconnected = new CountDownLatch(1);
        client.getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.RECONNECTED) {
                reconnected.countDown();
            }
        });
        return reconnected;
    }

    /** Whether the server of {@code spec} says it leads, by ZooKeeper's {@code srvr} command. */
    static boolean isLeader(InstanceSpec spec) {
        try (Socket socket = new Socket("127.0.0.1", spec.getPort())) {
            OutputStream out = socket.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII).contains("Mode: leader");
        } catch (IOException e) {
            return false;
        }
    }
}
