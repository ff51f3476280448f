package dev.fenceguard.zookeeper;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendProperties;

/** Stateful chains on ZooKeeper against the reference model. */
class ZooKeeperBackendProperties extends LockBackendProperties {

    private static final ZooKeeperLockBackend BACKEND = FenceGuardZooKeeper.builder(TestZooKeeper.newClient())
            .withRootPath(TestZooKeeper.newRoot("props")).build().lockBackend();

    @Override
    protected LockBackend backend() {
        return BACKEND;
    }
}
