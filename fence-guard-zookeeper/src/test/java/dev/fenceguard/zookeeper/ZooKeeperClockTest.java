package dev.fenceguard.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.testkit.BlockingBackend;
import java.time.Duration;
import java.time.Instant;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Expiry is judged by ZooKeeper's clock; the client's wall clock only decides when to ask it. A client
 * whose clock is an hour ahead (every lease looks expired to it) still cannot take a live lease over; one
 * whose clock is an hour behind only waits longer, while a client with a true clock takes the expired
 * lease over.
 */
class ZooKeeperClockTest {

    private static final CuratorFramework CLIENT = TestZooKeeper.newClient();
    private static final String ROOT = TestZooKeeper.newRoot("clock");
    private static final long HOUR = Duration.ofHours(1).toMillis();

    @AfterAll
    static void close() {
        CLIENT.close();
    }

    private static BlockingBackend backend(long skewMillis) {
        return BlockingBackend.of(FenceGuardZooKeeper.builder(CLIENT).withRootPath(ROOT)
                .withWallClock(() -> System.currentTimeMillis() + skewMillis).build().lockBackend());
    }

    @Test
    void aClientClockAheadCannotTakeOverALiveLease() {
        LockKey key = LockKey.of("ahead");
        Grant held = backend(0).tryAcquire(key, LockId.random(), Duration.ofSeconds(20)).orElseThrow();
        assertThat(backend(HOUR).tryAcquire(key, LockId.random(), Duration.ofSeconds(20)))
                .as("the server's clock says the lease is live, whatever the client's clock says").isEmpty();
        assertThat(backend(0).lookup(key)).map(i -> i.fence().value()).contains(held.fence());
    }

    @Test
    void aClientClockBehindOnlyDelaysATakeover() throws InterruptedException {
        LockKey key = LockKey.of("behind");
        Grant expired = backend(0).tryAcquire(key, LockId.random(), Duration.ofMillis(200)).orElseThrow();
        while (Instant.now().isBefore(expired.expiresAt().plusMillis(50))) {
            Thread.sleep(20); // real time passes for the lease to run out
        }
        assertThat(backend(-HOUR).tryAcquire(key, LockId.random(), Duration.ofSeconds(20)))
                .as("by a clock an hour behind, the lease still looks live: no takeover, only a delay").isEmpty();
        Grant next = backend(0).tryAcquire(key, LockId.random(), Duration.ofSeconds(20)).orElseThrow();
        assertThat(next.fence()).isGreaterThan(expired.fence());
    }
}
