package dev.fenceguard.zookeeper;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.zookeeper.internal.LockPaths;
import dev.fenceguard.zookeeper.internal.ZooKeeperErrors;
import dev.fenceguard.zookeeper.internal.ZooKeeperHandle;
import dev.fenceguard.zookeeper.internal.ZooKeeperHandle.Answer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock backend on Apache ZooKeeper, through a Curator client, whose fence is the {@code czxid} of the
 * lock node each grant creates: ZooKeeper's transaction id, global to the ensemble and strictly rising
 * (its high 32 bits are the leader's epoch, so it rises across leader elections too). Get it from
 * {@link FenceGuardZooKeeper#lockBackend()}:
 *
 * <pre>{@code
 * FenceGuardZooKeeper zooKeeper = FenceGuardZooKeeper.builder(curator).build();   // a started CuratorFramework
 * LockClient locks = LockClient.of(zooKeeper.lockBackend());
 * try (Lease lease = locks.acquire("orders:42", Duration.ofSeconds(10), Duration.ofSeconds(5)).orElseThrow()) {
 *     orders.ship(42L, lease.fence());               // your work; its fenced writes carry lease.fence()
 * }
 * }</pre>
 *
 * <p><b>Nodes.</b> Per lock key, under the {@linkplain FenceGuardZooKeeper.Builder#withRootPath root path}:
 * {@code <root>/k<key>} (persistent, created on the key's first use and never deleted; its data is the key,
 * and its data version counts the grants and releases of the key) and {@code <root>/k<key>/lease}
 * (ephemeral, the holder: its data is {@code <lock id>:<ttl ms>}, its {@code czxid} the fence, its
 * {@code mtime} the server's clock at the grant or last extension). The key is written into the name
 * with every byte other than ASCII letters, digits, {@code - _ .} percent-escaped, so keys never share
 * a node and never name {@code <root>/warm-up}, which warm-ups read.
 *
 * <p><b>Atomicity.</b> Every write is one ZooKeeper {@code multi}, applied whole or not at all:
 * <ul>
 *   <li>acquire: {@code setData(key node)} and {@code create(lease, EPHEMERAL)}: it fails if a lease
 *       exists; the {@code setData}'s answer carries the transaction's zxid (the lease's {@code czxid}, the
 *       fence) and time, in the same round trip;</li>
 *   <li>takeover of an expired lease: {@code setData(key node, version read)},
 *       {@code delete(lease, version read)}, {@code create(lease)}: it fails if anyone granted, released or
 *       extended since the read; the new lease has a new, greater {@code czxid};</li>
 *   <li>extend: {@code check(key node, version read)} and {@code setData(lease, version read)}: it keeps
 *       the node, so the fence; the key node's version tells this lease from a later one at the same path
 *       (both start at data version 0);</li>
 *   <li>release: {@code setData(key node, version read)} and {@code delete(lease, version read)}.</li>
 * </ul>
 * A release or an extend first reads the key node and the lease in one read-only {@code multi} (so it
 * takes two round trips); an acquire of a free key takes one. A write that lost a race with another
 * reads and decides again, up to 10 times; an acquire that keeps losing reports the key held, a release
 * or extend fails with {@code UNAVAILABLE}.
 *
 * <p><b>Clock.</b> A ZooKeeper condition cannot read a clock, but every write's answer carries the
 * server's time of that write ({@code mtime}, the leader's clock when it ordered the write). A lease
 * expires at {@code mtime + ttl} of its lease node, on that clock. An acquire that finds a lease
 * that its own wall clock says has expired asks the server's clock first (a {@code setData} on the root
 * node, whose answer's {@code mtime} is the server's now) and takes the lock over only if that is at or
 * after the expiry; the client's clock only decides when to ask, so a client clock ahead costs a round
 * trip and one behind delays a takeover by its lag, but neither lets two holders overlap. Extend and
 * release judge by the time of their own write: an extend that lands at or after the expiry has revived
 * nothing it may keep, so it deletes the node again (a second round trip) and answers empty; a release
 * that lands after the expiry frees the node and answers false. {@link #lookup} (diagnostics) judges by
 * the client's clock. After a leader election the leader's clock is another machine's: keep the
 * ensemble's clocks in step.
 *
 * <p><b>Session.</b> The lease node is ephemeral on the Curator client's session: when ZooKeeper ends the
 * session (the client was cut off for longer than the session timeout, or it closed), it deletes the node
 * and the lock is free. To make that harmless, a TTL may not exceed the session timeout (a longer one fails
 * {@code INVALID_ARGUMENT}): the holder's lease, timed on its own clock from the moment its request was
 * sent, then ends before ZooKeeper can end the session that the server last heard of after that moment. The
 * holder learns of a lost session at its next extend (which finds no node, so the lock client reports the
 * lease lost), and by then its lease has ended anyway, unless an operator or a test closed the session
 * early. An extend of a lease node that is ephemeral on an earlier session of the client (Curator opened a
 * new one after an expiry it was told of or judged itself, while the server may keep the old one, and the
 * node, for up to its timeout) answers empty too: the node ends with that session, when no extension can
 * promise to outlast.
 *
 * <p><b>Fences.</b> {@link FenceToken#MAX_VALUE} (9e14) is reached when the epoch passes 209,547 leader
 * elections; a grant whose {@code czxid} is above it deletes its node again and fails
 * {@code FENCE_EXHAUSTED}. ZooKeeper issues the fences, so {@link dev.fenceguard.core.FenceStrategy} does not
 * apply: {@code DENSE} and {@code CLOCK_FLOORED} are choices of backends that keep a counter. Restoring an
 * ensemble from an older snapshot rewinds zxids, and fences with them: see docs/zookeeper.md.
 *
 * <p><b>Connection.</b> Every call first waits for the Curator client's connection, within the call's
 * {@code timeout} and without holding a thread (a Curator {@code ConnectionStateListener}): a call made
 * while the client is still connecting for the first time, or reconnecting after a dropped connection or
 * an expired session, is sent once the connection is there, and fails {@code UNAVAILABLE} if the timeout
 * passes first; a client that is not started, or closed, fails {@code UNAVAILABLE} at once. So there is no
 * need to block on {@code CuratorFramework.blockUntilConnected} before the first call.
 *
 * <p><b>Asynchronous.</b> Each request is sent once with ZooKeeper's asynchronous API on the Curator
 * client's current handle (no Curator retry: a lock write is never repeated unseen) and its stage completes
 * on ZooKeeper's event thread. ZooKeeper has no per-request deadline to hand the call's {@code timeout} to
 * (it bounds only the wait for the connection, above): the lock client ends the caller's wait at the
 * timeout and releases a grant that answers after it (see {@link LockBackend}); a request to a server that
 * stopped answering fails with {@code UNAVAILABLE} when the ZooKeeper client gives the connection up (two
 * thirds of the session timeout). Thread-safe; the Curator client stays yours.
 *
 * @since 0.1
 */
public final class ZooKeeperLockBackend implements LockBackend {

    private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperLockBackend.class);

    /** Rounds of read and conditional write before a contended operation gives up. */
    static final int ATTEMPTS = 10;

    private static final byte[] NOTHING = new byte[0];

    private final ZooKeeperHandle zk;
    private final LockPaths paths;
    private final List<ACL> acl;
    private final LongSupplier wallClock;

    ZooKeeperLockBackend(ZooKeeperHandle zk, LockPaths paths, List<ACL> acl, LongSupplier wallClock) {
        this.zk = zk;
        this.paths = paths;
        this.acl = acl;
        this.wallClock = wallClock;
    }

    @Override
    public String name() {
        return "zookeeper";
    }

    /**
     * The root path under which the lock nodes live ({@link FenceGuardZooKeeper.Builder#withRootPath}).
     *
     * @since 0.1
     */
    public String rootPath() {
        return paths.root();
    }

    /**
     * The full ZooKeeper path (the Curator client's namespace included) of the persistent node of lock key
     * {@code key}, for operators; the holder's node is its child {@code lease}.
     *
     * @throws IllegalArgumentException if {@code key} is not a valid lock key
     * @throws NullPointerException if {@code key} is null
     * @since 0.1
     */
    public String keyNodeOf(String key) {
        return paths.keyNode(LockKey.of(key));
    }

    @Override
    public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return zk.connected(timeout, key.value(), "acquire").thenCompose(connected -> {
            FenceGuardException refused = ttlRefused(key, ttl, "acquire");
            return refused != null ? CompletableFuture.failedFuture(refused) : acquire(key, holderData(lockId, ttl), ttl, 1);
        });
    }

    private CompletableFuture<Optional<Grant>> acquire(LockKey key, byte[] holder, Duration ttl, int attempt) {
        String keyNode = paths.keyNode(key);
        String lease = paths.leaseNode(key);
        List<Op> ops = List.of(Op.setData(keyNode, key.utf8(), -1), Op.create(lease, holder, acl, CreateMode.EPHEMERAL));
        return zk.multi(ops, key.value(), "acquire").thenCompose(a -> {
            if (a.ok()) {
                return granted(key, stat(a, 0), ttl, "acquire");
            }
            if (a.failedIndex() == 0) {
                // the key's first use: its node does not exist yet
                return attempt < ATTEMPTS ? createKeyNode(key).thenCompose(x -> acquire(key, holder, ttl, attempt + 1))
                        : CompletableFuture.completedFuture(Optional.empty());
            }
            return contended(key, holder, ttl, attempt);
        });
    }

    /** A lease exists: take it over if it has expired by the server's clock and nobody touched it since the read. */
    private CompletableFuture<Optional<Grant>> contended(LockKey key, byte[] holder, Duration ttl, int attempt) {
        return read(key, "acquire").thenCompose(state -> {
            if (state.lease() == null) {
                return attempt < ATTEMPTS ? acquire(key, holder, ttl, attempt + 1) : CompletableFuture.completedFuture(Optional.empty());
            }
            Lease old = state.lease();
            if (wallClock.getAsLong() < old.expiresAt()) {
                return CompletableFuture.completedFuture(Optional.empty()); // live by this client's clock: no need to ask
            }
            return serverNow(key, "acquire").thenCompose(now -> {
                if (now < old.expiresAt()) {
                    return CompletableFuture.completedFuture(Optional.<Grant>empty());
                }
                String lease = paths.leaseNode(key);
                List<Op> ops = List.of(Op.setData(paths.keyNode(key), key.utf8(), state.keyVersion()),
                        Op.delete(lease, old.version()), Op.create(lease, holder, acl, CreateMode.EPHEMERAL));
                return zk.multi(ops, key.value(), "acquire").thenCompose(a -> a.ok() ? granted(key, stat(a, 0), ttl, "acquire")
                        : attempt < ATTEMPTS ? acquire(key, holder, ttl, attempt + 1)
                        : CompletableFuture.completedFuture(Optional.<Grant>empty()));
            });
        });
    }

    /** The grant of a multi whose first op set the key node: that op's zxid is the new lease node's czxid. */
    private CompletableFuture<Optional<Grant>> granted(LockKey key, Stat keyStat, Duration ttl, String operation) {
        long fence = keyStat.getMzxid();
        if (fence > FenceToken.MAX_VALUE) {
            // take no lock: delete the node just created, if this grant still holds it
            List<Op> undo = List.of(Op.setData(paths.keyNode(key), key.utf8(), keyStat.getVersion()), Op.delete(paths.leaseNode(key), -1));
            return zk.multi(undo, key.value(), operation).handle((a, e) -> {
                throw new FenceGuardException(ErrorCode.FENCE_EXHAUSTED, key.value(), "ZooKeeper's zxid " + fence + " is above the last"
                        + " fence " + FenceToken.MAX_VALUE + " (epoch " + (fence >>> 32) + "); no lock was taken"
                        + (e == null && a.ok() ? "" : " (the lease node could not be deleted: it goes with the session or the TTL)"));
            });
        }
        return CompletableFuture.completedFuture(Optional.of(new Grant(fence, Instant.ofEpochMilli(keyStat.getMtime() + ttl.toMillis()))));
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
        return zk.connected(timeout, key.value(), "release").thenCompose(connected -> release(key, lockId, 1));
    }

    private CompletableFuture<Boolean> release(LockKey key, LockId lockId, int attempt) {
        return read(key, "release").thenCompose(state -> {
            Lease held = state.lease();
            if (held == null || !held.lockId().equals(lockId.value())) {
                return CompletableFuture.completedFuture(false);
            }
            List<Op> ops = List.of(Op.setData(paths.keyNode(key), key.utf8(), state.keyVersion()), Op.delete(paths.leaseNode(key),
                    held.version()));
            return zk.multi(ops, key.value(), "release").thenCompose(a -> {
                if (a.ok()) {
                    // the node is gone either way; the lease was live only if the delete came before its expiry
                    return CompletableFuture.completedFuture(stat(a, 0).getMtime() < held.expiresAt());
                }
                return attempt < ATTEMPTS ? release(key, lockId, attempt + 1) : CompletableFuture.failedFuture(lostRaces(key, "release"));
            });
        });
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return zk.connected(timeout, key.value(), "extend").thenCompose(connected -> {
            FenceGuardException refused = ttlRefused(key, ttl, "extend");
            return refused != null ? CompletableFuture.failedFuture(refused) : extend(key, lockId, ttl, 1);
        });
    }

    private CompletableFuture<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, int attempt) {
        return read(key, "extend").thenCompose(state -> {
            Lease held = state.lease();
            if (held == null || !held.lockId().equals(lockId.value())) {
                return CompletableFuture.completedFuture(Optional.empty());
            }
            if (held.owner() != state.session()) {
                // Ephemeral on a session this client no longer uses (Curator opened a new one, after an expiry it
                // was told of or judged itself, while the server may keep the old one for up to its timeout):
                // the node ends with that session, at a time an extension cannot promise to outlast. Lost.
                return CompletableFuture.completedFuture(Optional.empty());
            }
            String keyNode = paths.keyNode(key);
            String lease = paths.leaseNode(key);
            List<Op> ops = List.of(Op.check(keyNode, state.keyVersion()), Op.setData(lease, holderData(lockId, ttl), held.version()));
            return zk.multi(ops, key.value(), "extend").thenCompose(a -> {
                if (!a.ok()) {
                    return attempt < ATTEMPTS ? extend(key, lockId, ttl, attempt + 1)
                            : CompletableFuture.failedFuture(lostRaces(key, "extend"));
                }
                Stat written = stat(a, 1);
                if (a.session() != held.owner()) {
                    // sent on a new session that Curator opened since the read: as above, the node's end is not ours
                    return CompletableFuture.completedFuture(Optional.empty());
                }
                if (written.getMtime() < held.expiresAt()) {
                    return CompletableFuture.completedFuture(Optional.of(Instant.ofEpochMilli(written.getMtime() + ttl.toMillis())));
                }
                // The write landed after the lease had expired: nobody else could take the key meanwhile (the
                // versions held), but an expired lease is never revived, so the node goes.
                List<Op> undo = List.of(Op.check(keyNode, state.keyVersion()), Op.delete(lease, written.getVersion()));
                return zk.multi(undo, key.value(), "extend").handle((u, e) -> {
                    if (e != null || !u.ok()) {
                        LOG.warn("fence-guard: key '{}': an extend landed after its lease had expired and the node could not be"
                                + " deleted again; it is free at its new expiry or when the session ends", key.value());
                    }
                    return Optional.<Instant>empty();
                });
            });
        });
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        return zk.connected(timeout, key.value(), "lookup").thenCompose(connected -> read(key, "lookup")).thenApply(state -> {
            Lease held = state.lease();
            if (held == null || held.czxid() > FenceToken.MAX_VALUE || wallClock.getAsLong() >= held.expiresAt()) {
                return Optional.empty();
            }
            return Optional.of(new LockInfo(key, FenceToken.of(held.czxid()), Instant.ofEpochMilli(held.expiresAt())));
        });
    }

    /**
     * Gets ready for the first calls: reads the node {@code <root>/warm-up} (no lock key maps to it, and
     * nothing creates it) with a read-only {@code multi}, the request every operation sends, once the
     * Curator client is connected (waiting for that within {@code timeout}, as every call does). Takes no
     * lock and writes nothing.
     *
     * @since 0.1
     */
    @Override
    public CompletionStage<Void> warmUp(Duration timeout) {
        return zk.connected(timeout, null, "warm-up").thenCompose(connected -> zk.multi(List.of(Op.getData(paths.warmUpNode())), null,
                "warm-up")).thenApply(a -> null);
    }

    /** The key node's version (-1 when it does not exist) and the lease, read at one instant on session {@code session}. */
    private record State(int keyVersion, Lease lease, long session) {}

    /**
     * A lease node: its holder's lock id, version, czxid, expiry ({@code mtime + ttl}, server clock) and the
     * session it is ephemeral on.
     */
    private record Lease(String lockId, int version, long czxid, long expiresAt, long owner) {}

    private CompletableFuture<State> read(LockKey key, String operation) {
        return zk.multi(List.of(Op.getData(paths.keyNode(key)), Op.getData(paths.leaseNode(key))), key.value(), operation)
                .thenApply(a -> {
                    int keyVersion = a.get(0) instanceof OpResult.GetDataResult k ? k.getStat().getVersion() : -1;
                    if (!(a.get(1) instanceof OpResult.GetDataResult l)) {
                        return new State(keyVersion, null, a.session());
                    }
                    String data = new String(l.getData() == null ? NOTHING : l.getData(), StandardCharsets.UTF_8);
                    int colon = data.lastIndexOf(':');
                    long ttl;
                    try {
                        ttl = colon > 0 ? Long.parseLong(data.substring(colon + 1)) : -1;
                    } catch (NumberFormatException e) {
                        ttl = -1;
                    }
                    if (ttl < 0) {
                        throw new FenceGuardException(ErrorCode.INTERNAL, key.value(), operation + " failed: the lease node "
                                + paths.leaseNode(key) + " holds data fence-guard did not write");
                    }
                    Stat s = l.getStat();
                    return new State(keyVersion, new Lease(data.substring(0, colon), s.getVersion(), s.getCzxid(), s.getMtime() + ttl,
                            s.getEphemeralOwner()), a.session());
                });
    }

    /** The server's clock now: the time of a write to the root node (nothing reads the root's data or version). */
    private CompletableFuture<Long> serverNow(LockKey key, String operation) {
        return zk.multi(List.of(Op.setData(paths.base(), NOTHING, -1)), key.value(), operation).thenApply(a -> {
            if (!a.ok()) {
                throw ZooKeeperErrors.of(a.rc(), key.value(), operation);
            }
            return stat(a, 0).getMtime();
        });
    }

    /** Creates the key's node (and the root path's nodes); one that exists already is fine. */
    private CompletableFuture<Void> createKeyNode(LockKey key) {
        return zk.createPersistent(paths.keyNode(key), key.utf8(), acl, key.value(), "acquire");
    }

    private FenceGuardException ttlRefused(LockKey key, Duration ttl, String operation) {
        int session;
        try {
            session = zk.sessionTimeoutMillis(key.value(), operation);
        } catch (FenceGuardException e) {
            return e;
        }
        if (ttl.toMillis() <= session) {
            return null;
        }
        return new FenceGuardException(ErrorCode.INVALID_ARGUMENT, key.value(), operation + " refused: ttl " + ttl
                + " is longer than the ZooKeeper session timeout of " + session + " ms, and ZooKeeper may end the session, and"
                + " so free the lock, before such a lease ends; use a ttl of at most the session timeout, or a longer session"
                + " (CuratorFrameworkFactory.builder().sessionTimeoutMs, within the server's maxSessionTimeout)");
    }

    private static FenceGuardException lostRaces(LockKey key, String operation) {
        return new FenceGuardException(ErrorCode.UNAVAILABLE, key.value(), operation + " failed: the lock's nodes changed under "
                + ATTEMPTS + " attempts in a row");
    }

    private static Stat stat(Answer a, int index) {
        return ((OpResult.SetDataResult) a.get(index)).getStat();
    }

    private static byte[] holderData(LockId lockId, Duration ttl) {
        return (lockId.value() + ":" + ttl.toMillis()).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "ZooKeeperLockBackend[" + paths.base() + "]";
    }
}
