package dev.fenceguard.zookeeper;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendContract;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;

/** The backend contract on ZooKeeper (expiry by the server's clock, the fence the lease node's czxid). */
class ZooKeeperBackendContractTest extends LockBackendContract {

    private static final CuratorFramework CLIENT = TestZooKeeper.newClient();
    private static final CuratorFramework RESTARTED = TestZooKeeper.newClient();
    private static final String ROOT = TestZooKeeper.newRoot("contract");

    @AfterAll
    static void close() {
        CLIENT.close();
        RESTARTED.close();
    }

    @Override
    protected LockBackend backend() {
        return FenceGuardZooKeeper.builder(CLIENT).withRootPath(ROOT).build().lockBackend();
    }

    /** Another client process: a Curator client of its own, so another session. */
    @Override
    protected LockBackend restartedBackend() {
        return FenceGuardZooKeeper.builder(RESTARTED).withRootPath(ROOT).build().lockBackend();
    }
}
