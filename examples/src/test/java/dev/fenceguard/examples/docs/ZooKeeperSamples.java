package dev.fenceguard.examples.docs;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.zookeeper.FenceGuardZooKeeper;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

/** The samples of docs/zookeeper.md and of the zookeeper module's Javadoc; the test runs them on an in-process ZooKeeper. */
final class ZooKeeperSamples {

    private ZooKeeperSamples() {}

    static LockClient docSetUp(String connectString) {
        // docs/zookeeper.md: setup (begin)
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString(connectString)                 // "zk1:2181,zk2:2181,zk3:2181"
                .sessionTimeoutMs(30_000)                     // a lease's TTL may not exceed the session timeout
                .retryPolicy(new ExponentialBackoffRetry(100, 5))
                .build();
        curator.start();                                      // yours: close it when the application stops
        FenceGuardZooKeeper zooKeeper = FenceGuardZooKeeper.builder(curator)
                .withRootPath("/fence-guard/locks")           // the default
                .build();
        LockClient locks = LockClient.of(zooKeeper.lockBackend());
        // docs/zookeeper.md: setup (end)
        return locks;
    }

    /** A stand-in for the application's own work under a lock: it records the fence it was given. */
    static final class Orders {
        final Map<Long, FenceToken> shipped = new ConcurrentHashMap<>();

        boolean ship(long id, FenceToken fence) {
            return shipped.put(id, fence) == null;
        }
    }

    static Optional<Boolean> javadocEntry(CuratorFramework curator, Orders orders) throws Exception {
        // dev/fenceguard/zookeeper/FenceGuardZooKeeper.java: entry (begin)
        FenceGuardZooKeeper fenceGuard = FenceGuardZooKeeper.builder(curator).withRootPath("/fence-guard/locks").build();
        LockClient locks = LockClient.of(fenceGuard.lockBackend());
        Optional<Boolean> shipped = locks.withLock("orders:42", Duration.ofSeconds(10), Duration.ofSeconds(5), lease ->
                orders.ship(42L, lease.fence()));          // your work; its fenced writes carry lease.fence()
        // dev/fenceguard/zookeeper/FenceGuardZooKeeper.java: entry (end)
        return shipped;
    }

    static void javadocLockBackend(CuratorFramework curator, Orders orders) throws Exception {
        // dev/fenceguard/zookeeper/ZooKeeperLockBackend.java: lock backend (begin)
        FenceGuardZooKeeper zooKeeper = FenceGuardZooKeeper.builder(curator).build();   // a started CuratorFramework
        LockClient locks = LockClient.of(zooKeeper.lockBackend());
        try (Lease lease = locks.acquire("orders:42", Duration.ofSeconds(10), Duration.ofSeconds(5)).orElseThrow()) {
            orders.ship(42L, lease.fence());               // your work; its fenced writes carry lease.fence()
        }
        // dev/fenceguard/zookeeper/ZooKeeperLockBackend.java: lock backend (end)
    }
}
