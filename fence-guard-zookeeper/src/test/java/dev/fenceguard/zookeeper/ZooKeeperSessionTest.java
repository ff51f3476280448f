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
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The lease is bounded by the ZooKeeper session as well as by its TTL, on an in-process server of this
 * class's own: a closed session frees the lock at once and its holder hears of it at its next call; a
 * holder cut off from the server has lost its lease by the time ZooKeeper ends its session and anyone
 * else gets the lock; a TTL longer than the session is refused before any request.
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
            assertThat(extendOnceCurator(holder, key, holderId)).as("the holder's next extend finds no lease: lost").isEmpty();
            assertThat(holder.release(key, holderId)).isFalse();
        }
    }

    /** The holder's client reconnects with a new session after its old one was closed; its calls fail until then. */
    private static Optional<java.time.Instant> extendOnceCurator(BlockingBackend holder, LockKey key, LockId id) throws InterruptedException {
        for (int i = 0; ; i++) {
            try {
                return holder.extend(key, id, Duration.ofSeconds(8));
            } catch (FenceGuardException e) {
                if (e.code() != ErrorCode.UNAVAILABLE || i > 200) {
                    throw e;
                }
                Thread.sleep(50); // polling Curator's reconnection, not ordering the test
            }
        }
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
     * A client that has no session yet (started, never connected: nothing listens on its port) cannot judge a
     * lease's bound against the session, so an acquire fails UNAVAILABLE, naming the wait, and sends nothing.
     * (The handle answers a session timeout of 0 until its first connection, which the check once took for a
     * granted 0 ms session and refused as INVALID_ARGUMENT: a CI run of the docs' sample hit it.)
     */
    @Test
    void anAcquireBeforeTheFirstSessionIsUnavailableNotRefused() throws Exception {
        try (CuratorFramework unconnected = org.apache.curator.framework.CuratorFrameworkFactory.newClient("127.0.0.1:1", 30_000,
                1_000, new org.apache.curator.retry.RetryOneTime(10))) {
            unconnected.start();
            ZooKeeperLockBackend backend = FenceGuardZooKeeper.builder(unconnected).withRootPath("/never").build().lockBackend();
            assertThatThrownBy(() -> backend.tryAcquire(LockKey.of("k"), LockId.random(), Duration.ofSeconds(1), Duration.ofSeconds(2))
                    .toCompletableFuture().join())
                    .hasCauseInstanceOf(FenceGuardException.class)
                    .cause().satisfies(e -> {
                        assertThat(((FenceGuardException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE);
                        assertThat(e.getMessage()).contains("no session yet");
                    });
        }
    }
}
