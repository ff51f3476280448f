package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockListener;
import dev.fenceguard.examples.docs.TestkitSamples.Counters;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.testkit.Face;
import dev.fenceguard.testkit.ZombieStorm;
import dev.fenceguard.testkit.servers.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Runs the samples of docs/testing.md and of the testkit's Javadoc that are code in a test: the lock
 * client and the storms' counters on the embedded PostgreSQL, Redis on a private {@code redis-server}.
 */
class TestkitSamplesTest {

    private static final Duration ttl = Duration.ofSeconds(30);

    private static Counters counters;
    private static LockClient client;
    private static RedisServers.Server redisServer;

    @BeforeAll
    static void setUp() {
        counters = new Counters(ContractFixtures.dataSource);
        client = LockClient.of(ContractFixtures.postgresBackend);
        redisServer = RedisServers.start();
    }

    @AfterAll
    static void tearDown() {
        redisServer.close();
    }

    // dev/fenceguard/testkit/Face.java: both faces (begin)
    @ParameterizedTest
    @EnumSource(Face.class)
    void releaseFreesTheKey(Face face) {
        Face.Locks locks = face.over(client);
        Lease lease = locks.tryAcquire("k", ttl).orElseThrow();
        assertThat(locks.release(lease)).isTrue();
    }
    // dev/fenceguard/testkit/Face.java: both faces (end)

    @Test
    void docStormOnPostgresIsSafe() throws Exception {
        counters.create("c");
        ZombieStorm.Result r = TestkitSamples.docStorm(client, counters.writer, counters);
        assertThat(r.isSafe()).isTrue();
        assertThat(r.applied()).isPositive();
        assertThat(counters.count("c")).isGreaterThanOrEqualTo(r.applied());
    }

    @Test
    void docFaultStormThroughAProxyIsSafe() throws Exception {
        counters.create("faults");
        TestkitSamples.docFaultStorm(counters.counter("faults"));
        assertThat(counters.count("faults")).as("the storm went on through the faults").isPositive();
    }

    @Test
    void javadocStormWithTheLockServerRestartedIsSafe() throws Exception {
        counters.create("javadoc");
        RedisClient redisClient = RedisClient.create(redisServer.uri().toString());
        try (FenceGuardRedis redis = FenceGuardRedis.builder(redisClient).build()) {
            ZombieStorm.Result r = TestkitSamples.javadocStorm(LockClient.of(redis.lockBackend()), counters.counter("javadoc"), redisServer);
            assertThat(r.faultsRun()).isEqualTo(1);
            assertThat(counters.count("javadoc")).isGreaterThanOrEqualTo(r.applied()).isPositive();
        } finally {
            redisClient.shutdown();
        }
    }

    @Test
    void tcpProxySampleWritesAndReadsThroughTheProxyAcrossACut() {
        TestkitSamples.tcpProxy(redisServer);
        RedisClient direct = RedisClient.create(redisServer.uri().toString());
        try (StatefulRedisConnection<String, String> c = direct.connect()) {
            assertThat(c.sync().get("k")).isEqualTo("v");
        } finally {
            direct.shutdown();
        }
    }

    @Test
    void manualTimeSourceExpiresTheLeaseWhenAdvanced() {
        TestkitSamples.Manual m = TestkitSamples.manualTimeSource();
        assertThat(m.lease().isValid()).isFalse();
        Lease next = m.client().tryAcquire("orders:42", Duration.ofSeconds(30)).orElseThrow();
        assertThat(next.fence()).isGreaterThan(m.lease().fence());
    }

    @Test
    void pausableBackendMakesAZombieWhoseLeaseIsTakenOver() throws Exception {
        TestkitSamples.Paused p = TestkitSamples.pausableBackend(ContractFixtures.postgresBackend);
        try {
            assertThat(p.link().isPaused()).isFalse();
            assertThat(p.stale().isValid()).isFalse();
            assertThat(p.fresh().fence()).isGreaterThan(p.stale().fence());
            assertThat(p.zombie().release(p.stale())).as("the zombie's late release does nothing").isFalse();
            assertThat(client.lookup("orders:42")).hasValueSatisfying(info -> assertThat(info.fence()).isEqualTo(p.fresh().fence()));
        } finally {
            p.fresh().close();
        }
    }

    @Test
    void testLocksGiveALeaseRunTheCodeAndTellTheListenerOfTheLoss() throws Exception {
        List<String> lost = new CopyOnWriteArrayList<>();
        LockListener myListener = new LockListener() {
            @Override
            public void onLeaseLost(Lease lease, Throwable cause) {
                lost.add(lease.key().value());
            }
        };
        TestkitSamples.Tested t = TestkitSamples.testLocks(myListener);
        assertThat(t.lease().fence().value()).isEqualTo(7);
        assertThat(t.lease().isValid()).isFalse();
        assertThat(lost).containsExactly("orders:42");
        assertThat(TestkitSamples.OrderService.SHIPPED).containsKey(42L);
    }
}
