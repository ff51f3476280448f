package dev.fenceguard.zookeeper;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.AsyncWaitersContract;

/**
 * {@link AsyncWaitersContract} on ZooKeeper: the callers' requests share the Curator client's one
 * connection (ZooKeeper's send and event threads), and the in-process server's threads are started before
 * the count begins. Fewer callers than on Redis: each poll of a held key is two requests.
 */
class ZooKeeperAsyncWaitersTest extends AsyncWaitersContract {

    private static final ZooKeeperLockBackend BACKEND = FenceGuardZooKeeper.builder(TestZooKeeper.newClient())
            .withRootPath(TestZooKeeper.newRoot("waiters")).build().lockBackend();

    @Override
    protected LockBackend backend() {
        return BACKEND;
    }

    @Override
    protected int waitersThatGiveUp() {
        return 2_000;
    }

    @Override
    protected int waitersThatGetIt() {
        return 200;
    }
}
