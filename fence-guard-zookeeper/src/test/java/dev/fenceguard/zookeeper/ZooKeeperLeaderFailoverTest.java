package dev.fenceguard.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
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
import java.util.concurrent.Callable;
import org.apache.curator.framework.CuratorFramework;
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
                Grant before = retrying(() -> locks.tryAcquire(held, holder, Duration.ofSeconds(15))).orElseThrow();
                long highestBefore = before.fence();
                for (int i = 0; i < 5; i++) { // a few more fences on another key under the old leader
                    LockId id = LockId.random();
                    highestBefore = Math.max(highestBefore, retrying(() -> locks.tryAcquire(other, id, Duration.ofSeconds(15))).orElseThrow().fence());
                    assertThat(retrying(() -> locks.release(other, id))).isTrue();
                }

                InstanceSpec leader = specs.stream().filter(ZooKeeperLeaderFailoverTest::isLeader).findFirst().orElseThrow();
                assertThat(cluster.killServer(leader)).isTrue();

                Optional<Instant> extended = retrying(() -> locks.extend(held, holder, Duration.ofSeconds(15)));
                if (extended.isPresent()) {
                    Optional<LockInfo> info = retrying(() -> locks.lookup(held));
                    assertThat(info).as("a kept lease keeps its fence").map(i -> i.fence().value()).contains(before.fence());
                    assertThat(retrying(() -> locks.release(held, holder))).as("a kept lease is released").isTrue();
                } else {
                    assertThat(retrying(() -> locks.release(held, holder))).as("a lost lease cannot be released").isFalse();
                }
                Grant after = retrying(() -> locks.tryAcquire(held, LockId.random(), Duration.ofSeconds(15))).orElseThrow();
                Grant afterOther = retrying(() -> locks.tryAcquire(other, LockId.random(), Duration.ofSeconds(15))).orElseThrow();
                long highest = highestBefore;
                assertThat(List.of(after.fence(), afterOther.fence())).as("fences after the election, above %d", highest)
                        .allMatch(f -> f > highest);
                assertThat(after.fence() >>> 32).as("the new leader's epoch").isGreaterThan(before.fence() >>> 32);
            }
        }
    }

    /** Calls made while the ensemble elects a leader fail UNAVAILABLE; each is repeated until it is answered. */
    private static <T> T retrying(Callable<T> call) throws Exception {
        for (int i = 0; ; i++) {
            try {
                return call.call();
            } catch (FenceGuardException e) {
                if (e.code() != ErrorCode.UNAVAILABLE || i >= 600) {
                    throw e;
                }
                Thread.sleep(50); // polling for the new leader, not ordering the test
            }
        }
    }

    /** Whether the server of {@code spec} says it leads, by ZooKeeper's {@code srvr} command. */
    private static boolean isLeader(InstanceSpec spec) {
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
