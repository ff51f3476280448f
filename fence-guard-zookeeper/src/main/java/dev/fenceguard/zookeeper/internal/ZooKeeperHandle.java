package dev.fenceguard.zookeeper.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.Timer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionStateListener;
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
 *
 * <p>Before a request, {@link #connected} waits (without a thread) for Curator's connection, within the
 * call's timeout: a client just started, or one reconnecting, gets its session first, rather than a
 * request sent into a connection that is not there (which ZooKeeper fails with {@code CONNECTIONLOSS}).
 */
public final class ZooKeeperHandle {

    private final CuratorFramework client;

    public ZooKeeperHandle(CuratorFramework client) {
        this.client = client;
    }

    public CuratorFramework client() {
        return client;
    }

    private static final CompletableFuture<Void> READY = CompletableFuture.completedFuture(null);

    /**
     * Completes when the Curator client is connected: at once if it is, else when Curator reports the
     * connection (a {@link ConnectionStateListener}, on Curator's event thread; no thread waits). Fails
     * {@code UNAVAILABLE} when {@code timeout} passes first (on fence-guard's timer thread), or at once
     * when the client is not started or already closed, since no connection can come then.
     */
    public CompletableFuture<Void> connected(Duration timeout, String key, String operation) {
        if (client.getZookeeperClient().isConnected()) {
            return READY;
        }
        CuratorFrameworkState state = client.getState();
        if (state != CuratorFrameworkState.STARTED) {
            return CompletableFuture.failedFuture(new FenceGuardException(ErrorCode.UNAVAILABLE, key, operation + " failed: the Curator"
                    + " client is " + (state == CuratorFrameworkState.LATENT ? "not started (call start() first)" : "closed")));
        }
        CompletableFuture<Void> ready = new CompletableFuture<>();
        ConnectionStateListener listener = (c, newState) -> {
            if (newState.isConnected()) {
                ready.complete(null);
            }
        };
        client.getConnectionStateListenable().addListener(listener);
        Timer.Bound bound = Timer.bound(timeout, () -> ready.completeExceptionally(new FenceGuardException(ErrorCode.UNAVAILABLE, key,
                operation + " failed: no connection to ZooKeeper within the call's timeout of " + timeout.toMillis() + " ms")));
        ready.whenComplete((x, e) -> {
            client.getConnectionStateListenable().removeListener(listener);
            bound.lift();
        });
        // Connected between the first look and the listener's registration: Curator reported it to nobody here.
        if (client.getZookeeperClient().isConnected()) {
            ready.complete(null);
        }
        return ready;
    }

    /**
     * What a {@code multi} answered: OK with a result per op, or the node-level failure of a write; and the id
     * of the session it was sent on (the handle's, at sending).
     */
    public record Answer(int rc, List<OpResult> results, long session) {
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
        long session = zk.getSessionId();
        try {
            zk.multi(ops, (rc, path, ctx, results) -> {
                if (isNodeOutcome(rc) && results != null) {
                    answer.complete(new Answer(rc, results, session));
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
     * @throws FenceGuardException ({@code UNAVAILABLE}) when Curator has no handle, or when no session has
     *     been negotiated: the handle answers 0 until its first connection, and a lease's bound cannot be
     *     judged against a session that does not exist (callers wait for {@link #connected} first)
     */
    public int sessionTimeoutMillis(String key, String operation) {
        int granted;
        try {
            granted = client.getZookeeperClient().getZooKeeper().getSessionTimeout();
        } catch (Exception | LinkageError e) {
            throw ZooKeeperErrors.map(e, key, operation);
        }
        if (granted <= 0) {
            // connected() came first, so this is a connection lost again in between: as ZooKeeper would answer it
            throw new FenceGuardException(ErrorCode.UNAVAILABLE, key, operation
                    + " failed: the ZooKeeper client has no session (it lost its connection again while the call began)");
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
