package dev.fenceguard.zookeeper;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LeaderElectionContract;
import org.apache.curator.framework.CuratorFramework;

/**
 * Leader election on ZooKeeper. fence-guard has no fenced writes on ZooKeeper (it is not where the data
 * lives), so the leaders' writes go to a znode through {@link FencedZnode}, a versioned compare-and-set
 * on the same ensemble.
 */
class ZooKeeperLeaderElectionTest extends LeaderElectionContract {

    private static final CuratorFramework CLIENT = TestZooKeeper.newClient();
    private static final String ROOT = TestZooKeeper.newRoot("election");
    private static final ZooKeeperLockBackend BACKEND = FenceGuardZooKeeper.builder(CLIENT).withRootPath(ROOT).build().lockBackend();

    @Override
    protected LockBackend backend() {
        return BACKEND;
    }

    @Override
    protected WriteOutcome write(String resource, FenceToken term) {
        return FencedZnode.write(CLIENT, ROOT + "-jobs/" + resource.replace('/', '_'), term.value());
    }
}
