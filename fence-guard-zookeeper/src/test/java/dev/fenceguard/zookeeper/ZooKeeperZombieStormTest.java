package dev.fenceguard.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.testkit.ZombieStorm;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;

/**
 * The zombie storm on the ZooKeeper lock backend, on the shared test server: the counter is a
 * {@link FencedZnode} (a fenced compare-and-set on the same ensemble, through a client of its own), every
 * zombie's write must be refused by the fence and no update lost. Size: 100 attempts, or
 * {@code -Dfenceguard.storm.attempts=N} for a soak.
 */
class ZooKeeperZombieStormTest {

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLost() throws Exception {
        int size = ZombieStorm.attemptsProperty(100);
        String root = TestZooKeeper.newRoot("storm");
        try (CuratorFramework lockClient = TestZooKeeper.newClient(TestZooKeeper.connectString(), 10_000);
                CuratorFramework resourceClient = TestZooKeeper.newClient()) {
            ZooKeeperLockBackend backend = FenceGuardZooKeeper.builder(lockClient).withRootPath(root).build().lockBackend();
            ZooKeeperStorms.Counter counter = new ZooKeeperStorms.Counter(resourceClient, root + "-counter");
            ZombieStorm.Result r = ZooKeeperStorms.report("no fault", ZooKeeperStorms.storm(backend, counter, size).build().run());
            r.requireSafe();
            assertThat(r.attempts()).isEqualTo(size);
            assertThat(r.errors()).as("no fault, no error: %s", r.firstErrors()).isEmpty();
            assertThat(r.stalls()).as("zombies were made").isPositive();
            assertThat(r.rejectedStale()).as("zombies were refused").isPositive();
            assertThat(counter.applied(0)).isEqualTo(r.applied()).isEqualTo(r.finalValue());
        }
    }
}
