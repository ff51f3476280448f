package dev.fenceguard.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.testkit.BlockingBackend;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A real server whose zxid is past {@link FenceToken#MAX_VALUE}: a standalone ZooKeeper takes its last zxid
 * from the name of its newest snapshot file, so a data directory whose only snapshot is renamed to
 * {@code snapshot.<epoch 209,548 in the high bits>} starts there, as an ensemble after that many elections
 * would. A grant fails {@code FENCE_EXHAUSTED} and leaves no lease node behind.
 */
@Timeout(60) // a guard against a hang, not a timing assertion
class ZooKeeperFenceExhaustionTest {

    @Test
    void aGrantWhoseCzxidIsAboveTheLastFenceFailsAndTakesNoLock() throws Exception {
        File dir = Files.createTempDirectory("fg-zk-exhausted").toFile();
        try (TestingServer first = new TestingServer(new InstanceSpec(dir, -1, -1, -1, false, -1, 500, 0, Map.of()), true)) {
            first.getPort(); // a fresh server writes its first snapshot on start
        }
        Path data = dir.toPath().resolve("version-2");
        List<Path> files;
        try (Stream<Path> list = Files.list(data)) {
            files = list.toList();
        }
        Path snapshot = files.stream().filter(p -> p.getFileName().toString().startsWith("snapshot.")).findFirst().orElseThrow();
        for (Path p : files) {
            if (!p.equals(snapshot)) {
                Files.delete(p); // no transaction log to replay past the snapshot
            }
        }
        long epoch = FenceToken.MAX_VALUE / (1L << 32) + 1;
        Files.move(snapshot, data.resolve("snapshot." + Long.toHexString(epoch << 32)));

        try (TestingServer server = new TestingServer(new InstanceSpec(dir, -1, -1, -1, true, -1, 500, 0, Map.of()), true);
                CuratorFramework client = TestZooKeeper.newClient(server.getConnectString(), 10_000)) {
            ZooKeeperLockBackend backend = FenceGuardZooKeeper.builder(client).withRootPath("/exhausted").build().lockBackend();
            LockKey key = LockKey.of("orders:42");
            assertThatThrownBy(() -> BlockingBackend.of(backend).tryAcquire(key, LockId.random(), Duration.ofSeconds(5)))
                    .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FENCE_EXHAUSTED))
                    .hasMessageContaining("no lock was taken").hasMessageContaining("epoch " + epoch);
            assertThat(client.checkExists().forPath(backend.keyNodeOf("orders:42") + "/lease")).as("no lease node left").isNull();
            assertThat(BlockingBackend.of(backend).lookup(key)).isEmpty();
        }
    }
}
