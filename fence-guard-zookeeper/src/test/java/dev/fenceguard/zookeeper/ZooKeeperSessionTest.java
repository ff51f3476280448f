package dev.fenceguard.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The lease is bounded by the ZooKeeper session as well as by its TTL, on an in-process server of this
 * class's own: a closed session frees the lock at once and its holder hears of it at its next call; a
 * holder cut off from the server has lost its lease by the time ZooKeeper ends its session and anyone
 * else gets the lock; a TTL longer than the session is refused before any request; a call waits for the
 * client's connection within its own timeout.
 */
@Timeout(120) // a guard against a hang, not a timing assertion
class ZooKeeperSessionTest {

    private static final TestingServer SERVER = start();
    private static final String ROOT = TestZooKeeper.newRoot("session");

    private static TestingServer start() {
        try {
            return new TestingServer(TestZooKeeper.spec(-1), true);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @AfterAll
    static void stop() throws Exception {
        SERVER.close();
    }

    private static ZooKeeperLockBackend backendOn(CuratorFramework client) {
        return FenceGuardZooKeeper.builder(client).withRootPath(ROOT).build().lockBackend();
    }

    @Test
    void aClosedSessionFreesTheLockAndItsHolderFindsItLost() throws Exception {
        try (CuratorFramework holderClient = TestZooKeeper.newClient(SERVER.getConnectString(), 10_000);
                CuratorFramework otherClient = TestZooKeeper.newClient(SERVER.getConnectString(), 10_000)) {
            BlockingBackend holder = BlockingBackend.of(backendOn(holderClient));
            BlockingBackend other = BlockingBackend.of(backendOn(otherClient));
            LockKey key = LockKey.of("closed-session");
            LockId holderId = LockId.random();
            Grant first = holder.tryAcquire(key, holderId, Duration.ofSeconds(8)).orElseThrow();
            assertThat(other.tryAcquire(key, LockId.random(), Duration.ofSeconds(8))).as("held while the session lives").isEmpty();

            // Close the holder's session on the server, as an operator (or a server that expired it) would: a
            // second handle on the same session id and password closes it, and ZooKeeper deletes its ephemeral nodes.
            // close() waits for the server's answer, so the node is gone when it returns; the handle must be
            // connected first, or there is no session on the wire to close.
            ZooKeeper holderZk = holderClient.getZookeeperClient().getZooKeeper();
            CountDownLatch newSession = newSessionLatch(holderClient);
            CountDownLatch connected = new CountDownLatch(1);
            ZooKeeper closer = new ZooKeeper(SERVER.getConnectString(), 10_000, event -> {
                if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    connected.countDown();
                }
            }, holderZk.getSessionId(), holderZk.getSessionPasswd());
            assertThat(connected.await(30, TimeUnit.SECONDS)).as("the second handle joined the holder's session").isTrue();
            closer.close();

            Optional<Grant> taken = other.tryAcquire(key, LockId.random(), Duration.ofSeconds(8));
            assertThat(taken).as("the closed session's lease node is gone, so the key is free").isPresent();
            assertThat(taken.get().fence()).isGreaterThan(first.fence());
            // Curator learns of the end when the server refuses its reconnection, and opens a new session: until it
            // has, an extend could still be sent on the closed session (and fail SESSIONEXPIRED)
            assertThat(newSession.await(60, TimeUnit.SECONDS)).as("Curator's new session").isTrue();
            assertThat(holder.extend(key, holderId, Duration.ofSeconds(8))).as("the holder's next extend finds no lease: lost").isEmpty();
            assertThat(holder.release(key, holderId)).isFalse();
        }
    }

    /**
     * Curator may give a session up while the server still keeps it, and the lease node with it (it judges the
     * session expired on its own after a cut as long as the session timeout, and opens a new one; the server
     * may time the old one out a tick later): the holder's next extend then runs on a session that does not own
     * the node, whose end no extension can promise to outlast, and answers the lease lost. Staged with a
     * second client extending under the holder's lock id, since Curator's own {@code KillSession} closes the
     * old session on the server too (the node goes, which the closed-session test covers).
     */
    @Test
    void anExtendFromAnotherSessionThanTheLeaseNodesIsLost() throws Exception {
        try (CuratorFramework holderClient = TestZooKeeper.newClient(SERVER.getConnectString(), 10_000);
                CuratorFramework newSessionClient = TestZooKeeper.newClient(SERVER.getConnectString(), 10_000)) {
            ZooKeeperLockBackend backend = backendOn(holderClient);
            LockKey key = LockKey.of("other-session");
            LockId holderId = LockId.random();
            BlockingBackend.of(backend).tryAcquire(key, holderId, Duration.ofSeconds(8)).orElseThrow();
            String leaseNode = backend.keyNodeOf("other-session") + "/lease";
            org.apache.zookeeper.data.Stat before = holderClient.checkExists().forPath(leaseNode);

            assertThat(BlockingBackend.of(backendOn(newSessionClient)).extend(key, holderId, Duration.ofSeconds(8)))
                    .as("the node is ephemeral on another session: lost").isEmpty();
            assertThat(holderClient.checkExists().forPath(leaseNode).getVersion()).as("not extended").isEqualTo(before.getVersion());
            assertThat(BlockingBackend.of(backend).extend(key, holderId, Duration.ofSeconds(8))).as("on its own session it is kept")
                    .isPresent();
            assertThat(BlockingBackend.of(backend).release(key, holderId)).isTrue();
        }
    }

    /** Counts down when {@code client} has a new session: Curator reported the old one LOST, then RECONNECTED. */
    static CountDownLatch newSessionLatch(CuratorFramework client) {
        CountDownLatch reconnected = new CountDownLatch(1);
        AtomicBoolean lost = new AtomicBoolean();
        client.getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.LOST) {
                lost.set(true);
            } else if (state == ConnectionState.RECONNECTED && lost.get()) {
                reconnected.countDown();
            }
        });
        return reconnected;
    }

    @Test
    void aHolderCutOffFromTheServerHasLostItsLeaseBeforeAnyoneElseGetsTheLock() throws Exception {
        try (TcpProxy proxy = TcpProxy.start("127.0.0.1", SERVER.getPort());
                CuratorFramework holderClient = TestZooKeeper.newClient(proxy.hostPort(), 2_000);
                CuratorFramework otherClient = TestZooKeeper.newClient(SERVER.getConnectString(), 10_000)) {
            int session = holderClient.getZookeeperClient().getZooKeeper().getSessionTimeout();
            LockClient holder = LockClient.builder(backendOn(holderClient)).withMetrics(LockMetrics.none()).build();
            LockClient other = LockClient.builder(backendOn(otherClient)).withMetrics(LockMetrics.none())
                    .withBackoff(Duration.ofMillis(20), Duration.ofMillis(100)).build();
            // the longest lease the session allows: it ends no later than ZooKeeper can end the session
            Lease lease = holder.tryAcquire("cut-off", Duration.ofMillis(session)).orElseThrow();

            proxy.delay(Duration.ofMinutes(10)); // the holder's requests and heartbeats no longer arrive

            Lease next = other.acquire("cut-off", Duration.ofSeconds(8), Duration.ofSeconds(60)).orElseThrow();
            assertThat(lease.isValid()).as("by the time another client holds the lock, the cut-off holder's lease (ttl = session"
                    + " timeout %d ms) has ended on its own clock", session).isFalse();
            assertThat(next.fence()).isGreaterThan(lease.fence());
            proxy.delay(Duration.ZERO);
            next.close();
        }
    }

    @Test
    void aTtlLongerThanTheSessionIsRefusedBeforeAnyRequest() throws Exception {
        try (CuratorFramework client = TestZooKeeper.newClient(SERVER.getConnectString(), 2_000)) {
            int session = client.getZookeeperClient().getZooKeeper().getSessionTimeout();
            ZooKeeperLockBackend backend = backendOn(client);
            LockKey key = LockKey.of("too-long");
            Duration ttl = Duration.ofMillis(session + 1);
            assertThatThrownBy(() -> BlockingBackend.of(backend).tryAcquire(key, LockId.random(), ttl))
                    .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
                    .hasMessageContaining("ttl " + ttl).hasMessageContaining("session timeout of " + session + " ms");
            assertThat(client.checkExists().forPath(backend.keyNodeOf("too-long"))).as("nothing written").isNull();
            assertThatThrownBy(() -> BlockingBackend.of(backend).extend(key, LockId.random(), ttl))
                    .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
        }
    }

    /**
     * A call made before the client's first connection waits for it within the call's timeout, and is sent
     * once it is there: here the server itself starts only after the acquire was issued. (The handle answers
     * a session timeout of 0 until its first connection; such a call once failed, first INVALID_ARGUMENT
     * against a 0 ms session, then UNAVAILABLE.)
     */
    @Test
    void anAcquireIssuedBeforeTheServerStartsIsGrantedOnceTheClientConnects() throws Exception {
        InstanceSpec spec = TestZooKeeper.spec(-1);
        try (TestingServer late = new TestingServer(spec, false);
                CuratorFramework client = CuratorFrameworkFactory.newClient("127.0.0.1:" + spec.getPort(), 10_000, 60_000,
                        new RetryOneTime(10))) {
            client.start();
            ZooKeeperLockBackend backend = backendOn(client);
            LockKey key = LockKey.of("before-the-server");
            CompletableFuture<Optional<Grant>> acquire = backend.tryAcquire(key, LockId.random(), Duration.ofSeconds(1), Duration.ofSeconds(60))
                    .toCompletableFuture();
            CompletableFuture<Void> warmUp = backend.warmUp(Duration.ofSeconds(60)).toCompletableFuture();
            assertThat(acquire).as("no server listens yet: the acquire waits for the connection").isNotDone();
            assertThat(warmUp).isNotDone();

            late.start();

            Grant grant = acquire.get(60, TimeUnit.SECONDS).orElseThrow();
            assertThat(grant.fence()).isPositive();
            warmUp.get(60, TimeUnit.SECONDS);
            assertThat(client.checkExists().forPath(backend.keyNodeOf("before-the-server") + "/lease")).as("the lease node").isNotNull();
        }
    }

    /** Without a connection by the call's timeout a call fails UNAVAILABLE, saying so, and sends nothing. */
    @Test
    void aCallWithoutAConnectionByItsTimeoutIsUnavailable() throws Exception {
        try (CuratorFramework unconnected = CuratorFrameworkFactory.newClient("127.0.0.1:1", 30_000, 1_000, new RetryOneTime(10))) {
            unconnected.start();
            ZooKeeperLockBackend backend = FenceGuardZooKeeper.builder(unconnected).withRootPath("/never").build().lockBackend();
            LockKey key = LockKey.of("k");
            List<CompletableFuture<?>> calls = List.of(
                    backend.tryAcquire(key, LockId.random(), Duration.ofSeconds(1), Duration.ofMillis(200)).toCompletableFuture(),
                    backend.extend(key, LockId.random(), Duration.ofSeconds(1), Duration.ofMillis(200)).toCompletableFuture(),
                    backend.release(key, LockId.random(), Duration.ofMillis(200)).toCompletableFuture(),
                    backend.lookup(key, Duration.ofMillis(200)).toCompletableFuture(),
                    backend.warmUp(Duration.ofMillis(200)).toCompletableFuture());
            for (CompletableFuture<?> call : calls) {
                assertThatThrownBy(() -> call.get(30, TimeUnit.SECONDS)).cause().isInstanceOfSatisfying(FenceGuardException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
                    assertThat(e.getMessage()).contains("no connection to ZooKeeper within the call's timeout of 200 ms");
                });
            }
        }
    }

    /** A client never started, or closed, cannot connect: a call fails UNAVAILABLE at once, naming why. */
    @Test
    void aCallOnAClientNotStartedOrClosedIsUnavailableAtOnce() {
        CuratorFramework latent = CuratorFrameworkFactory.newClient(SERVER.getConnectString(), new RetryOneTime(10));
        CompletableFuture<?> onLatent = backendOn(latent).tryAcquire(LockKey.of("k"), LockId.random(), Duration.ofSeconds(1),
                Duration.ofMinutes(10)).toCompletableFuture();
        CuratorFramework closed = TestZooKeeper.newClient(SERVER.getConnectString(), 10_000);
        closed.close();
        CompletableFuture<?> onClosed = backendOn(closed).release(LockKey.of("k"), LockId.random(), Duration.ofMinutes(10))
                .toCompletableFuture();
        assertThat(onLatent).as("failed at once, not after the 10 minutes").isCompletedExceptionally();
        assertThat(onClosed).as("failed at once, not after the 10 minutes").isCompletedExceptionally();
        assertThatThrownBy(onLatent::join).cause().isInstanceOfSatisfying(FenceGuardException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE)).hasMessageContaining("not started");
        assertThatThrownBy(onClosed::join).cause().isInstanceOfSatisfying(FenceGuardException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE)).hasMessageContaining("closed");
    }
}
