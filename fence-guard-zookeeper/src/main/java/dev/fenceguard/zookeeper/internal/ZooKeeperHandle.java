package dev.fenceguard.zookeeper.internal;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;

/**
 * The Curator client's current ZooKeeper handle, asked once per call (Curator replaces it after a session
 * expires), and ZooKeeper's asynchronous {@code multi}, the only request the lock backend sends. Curator's
 * own background operations retry a request after a lost connection; a lock write must not be sent twice
 * unseen, so the backend sends each request once on the handle, and a lost connection is a failure the
 * caller sees ({@code UNAVAILABLE}). The stages complete on ZooKeeper's event thread.
 */
public final class ZooKeeperHandle {

    private final CuratorFramework client;

    public ZooKeeperHandle(CuratorFramework client) {
        this.client = client;
    }

    public CuratorFramework client() {
        return client;
    }

    /** What a {@code multi} answered: OK with a result per op, or the node-level failure of a write. */
    public record Answer(int rc, List<OpResult> results) {
        public boolean ok() {
            return rc == KeeperException.Code.OK.intValue();
        }

        /** The failed op of a write {@code multi} that failed as a whole: its index and code, or -1 when none is named. */
        public int failedIndex() {
            for (int i = 0; i < results.size(); i++) {
                if (results.get(i) instanceof OpResult.ErrorResult e && e.getErr() != KeeperException.Code.OK.intValue()
                        && e.getErr() != KeeperException.Code.RUNTIMEINCONSISTENCY.intValue()) {
                    return i;
                }
            }
            return -1;
        }

        public OpResult get(int i) {
            return results.get(i);
        }
    }

    /**
     * Sends {@code ops} as one {@code multi}. Completes with the answer when the server answered: all ops
     * applied, or (a write) none, with the failure of one of them ({@code NONODE}, {@code NODEEXISTS},
     * {@code BADVERSION}, {@code NOTEMPTY}), which the caller judges. Any other failure (a lost
     * connection, an expired session, a refused request) completes it exceptionally, mapped.
     */
    public CompletableFuture<Answer> multi(List<Op> ops, String key, String operation) {
        CompletableFuture<Answer> answer = new CompletableFuture<>();
        ZooKeeper zk;
        try {
            zk = client.getZookeeperClient().getZooKeeper();
        } catch (Exception | LinkageError e) {
            return CompletableFuture.failedFuture(ZooKeeperErrors.map(e, key, operation));
        }
        try {
            zk.multi(ops, (rc, path, ctx, results) -> {
                if (isNodeOutcome(rc) && results != null) {
                    answer.complete(new Answer(rc, results));
                } else {
                    answer.completeExceptionally(ZooKeeperErrors.of(rc, key, operation));
                }
            }, null);
        } catch (RuntimeException e) {
            answer.completeExceptionally(ZooKeeperErrors.map(e, key, operation));
        }
        return answer;
    }

    private static boolean isNodeOutcome(int rc) {
        KeeperException.Code code = KeeperException.Code.get(rc);
        return code == KeeperException.Code.OK || code == KeeperException.Code.NONODE || code == KeeperException.Code.NODEEXISTS
                || code == KeeperException.Code.BADVERSION || code == KeeperException.Code.NOTEMPTY;
    }

    /**
     * The session timeout ZooKeeper granted the current handle (the server clamps what the client asked for to
     * its bounds).
     *
     * @throws dev.fenceguard.core.FenceGuardException ({@code UNAVAILABLE}) when Curator has no handle, or when
     *     no session has been negotiated yet: the handle answers 0 until its first connection (a client just
     *     started), and a lease's bound cannot be judged against a session that does not exist yet
     */
    public int sessionTimeoutMillis(String key, String operation) {
        int granted;
        try {
            granted = client.getZookeeperClient().getZooKeeper().getSessionTimeout();
        } catch (Exception | LinkageError e) {
            throw ZooKeeperErrors.map(e, key, operation);
        }
        if (granted <= 0) {
            throw new dev.fenceguard.core.FenceGuardException(dev.fenceguard.core.ErrorCode.UNAVAILABLE, key, operation
                    + " failed: the ZooKeeper client has no session yet (still connecting); wait for it, e.g."
                    + " CuratorFramework.blockUntilConnected, before the first lock call");
        }
        return granted;
    }

    /**
     * Creates the persistent node {@code path} with {@code data}, and its missing parents (empty), each
     * with {@code acl}; one that exists already is fine.
     */
    public CompletableFuture<Void> createPersistent(String path, byte[] data, List<ACL> acl, String key, String operation) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        ZooKeeper zk;
        try {
            zk = client.getZookeeperClient().getZooKeeper();
        } catch (Exception | LinkageError e) {
            return CompletableFuture.failedFuture(ZooKeeperErrors.map(e, key, operation));
        }
        zk.create(path, data, acl, CreateMode.PERSISTENT, (rc, p, ctx, name) -> {
            if (rc == KeeperException.Code.OK.intValue() || rc == KeeperException.Code.NODEEXISTS.intValue()) {
                done.complete(null);
            } else if (rc == KeeperException.Code.NONODE.intValue() && path.lastIndexOf('/') > 0) {
                createPersistent(path.substring(0, path.lastIndexOf('/')), new byte[0], acl, key, operation)
                        .thenCompose(x -> createPersistent(path, data, acl, key, operation))
                        .whenComplete((x, e) -> {
                            if (e == null) {
                                done.complete(null);
                            } else {
                                done.completeExceptionally(e);
                            }
                        });
            } else {
                done.completeExceptionally(ZooKeeperErrors.of(rc, key, operation));
            }
        }, null);
        return done;
    }
}
