package dev.fenceguard.zookeeper;

import dev.fenceguard.zookeeper.internal.LockPaths;
import dev.fenceguard.zookeeper.internal.ZooKeeperHandle;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;

/**
 * fence-guard on one ZooKeeper ensemble, the one entry of this module: built from a Curator client, it
 * hands out the {@linkplain #lockBackend() lock backend}, whose fence is the {@code czxid} of the lock
 * node each grant creates. With a {@code CuratorFramework curator} of yours, started:
 *
 * <pre>{@code
 * FenceGuardZooKeeper fenceGuard = FenceGuardZooKeeper.builder(curator).withRootPath("/fence-guard/locks").build();
 * LockClient locks = LockClient.of(fenceGuard.lockBackend());
 * Optional<Boolean> shipped = locks.withLock("orders:42", Duration.ofSeconds(10), Duration.ofSeconds(5), lease ->
 *         orders.ship(42L, lease.fence()));          // your work; its fenced writes carry lease.fence()
 * }</pre>
 *
 * <p>ZooKeeper is a coordination service, not where the data a zombie would overwrite lives: this module
 * offers the lock only (no idempotency backend, flight store or fenced writes). Guard the resource with
 * the module of the store that holds it (jOOQ, JPA, Redis, Firestore), passing {@code lease.fence()}.
 *
 * <p>There is no fence strategy to choose: ZooKeeper's zxid is the fence, so
 * {@link dev.fenceguard.core.FenceStrategy} ({@code DENSE}, {@code CLOCK_FLOORED}), a choice of backends
 * that keep their own counter, does not apply (docs/zookeeper.md says what a restored snapshot does). The
 * lease lasts at most the TTL and at most the client's ZooKeeper session, and a TTL longer than the
 * session timeout is refused ({@link ZooKeeperLockBackend}).
 *
 * <p>The Curator client stays yours: start it before the first call, close it after the last; this class
 * never closes it. Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class FenceGuardZooKeeper {

    private final ZooKeeperLockBackend lockBackend;

    private FenceGuardZooKeeper(Builder b) {
        this.lockBackend = new ZooKeeperLockBackend(new ZooKeeperHandle(b.client), LockPaths.under(b.rootPath, b.client.getNamespace()),
                b.acl, b.wallClock);
    }

    /**
     * Settings for fence-guard on the ensemble {@code client} talks to.
     *
     * @throws NullPointerException if {@code client} is null
     * @since 0.1
     */
    public static Builder builder(CuratorFramework client) {
        return new Builder(client);
    }

    /**
     * The lock backend: wrap it in a {@link dev.fenceguard.core.LockClient}.
     *
     * @since 0.1
     */
    public ZooKeeperLockBackend lockBackend() {
        return lockBackend;
    }

    @Override
    public String toString() {
        return "FenceGuardZooKeeper[" + lockBackend + "]";
    }

    /**
     * Settings of a {@link FenceGuardZooKeeper}. Not thread-safe; {@link #build()} copies them, so a
     * builder can be reused.
     *
     * @since 0.1
     */
    public static final class Builder {
        private final CuratorFramework client;
        private String rootPath = "/fence-guard/locks";
        private List<ACL> acl = ZooDefs.Ids.OPEN_ACL_UNSAFE;
        private LongSupplier wallClock = System::currentTimeMillis;

        private Builder(CuratorFramework client) {
            this.client = Objects.requireNonNull(client, "client");
        }

        /**
         * The path under which the lock nodes live, one persistent node per lock key and its ephemeral
         * {@code lease} child; default {@code /fence-guard/locks}. Created (with its parents) on first use. A
         * Curator client with a namespace puts it under the namespace. Every instance that locks the same keys
         * must use the same root path; nothing else should write under it.
         *
         * @throws IllegalArgumentException if it is not an absolute path below {@code /} without a trailing
         *     {@code /}, has an empty, {@code .} or {@code ..} segment, a character other than ASCII letters,
         *     digits and {@code - _ . :}, or lies in ZooKeeper's own {@code /zookeeper} tree
         * @throws NullPointerException if {@code rootPath} is null
         * @since 0.1
         */
        public Builder withRootPath(String rootPath) {
            this.rootPath = LockPaths.requireRoot(rootPath);
            return this;
        }

        /**
         * The ACL of every node this instance creates (the root path's nodes, the key nodes and the lease
         * nodes); default {@code ZooDefs.Ids.OPEN_ACL_UNSAFE}, anyone may do anything. The requests are sent on
         * the Curator client's ZooKeeper handle, so its {@code ACLProvider} is not consulted: with
         * authentication, pass the ACL your provider would give, e.g. {@code ZooDefs.Ids.CREATOR_ALL_ACL}.
         *
         * @throws IllegalArgumentException if {@code acl} is empty
         * @throws NullPointerException if {@code acl} or one of its entries is null
         * @since 0.1
         */
        public Builder withAcl(List<ACL> acl) {
            Objects.requireNonNull(acl, "acl");
            List<ACL> copy = List.copyOf(acl);
            if (copy.isEmpty()) {
                throw new IllegalArgumentException("acl must have at least one entry (ZooKeeper refuses a node without one), was []");
            }
            this.acl = copy;
            return this;
        }

        /**
         * Test seam, not API: the wall clock that decides when an acquire asks the server's clock whether a
         * lease has expired. Tests hand it a clock hours off to show that it only costs round trips or delays.
         */
        Builder withWallClock(LongSupplier wallClock) {
            this.wallClock = Objects.requireNonNull(wallClock, "wallClock");
            return this;
        }

        /**
         * A new instance with these settings. Does no I/O.
         *
         * @since 0.1
         */
        public FenceGuardZooKeeper build() {
            return new FenceGuardZooKeeper(this);
        }
    }
}
