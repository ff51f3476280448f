package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.testkit.ZombieStorm;
import dev.fenceguard.testkit.servers.RedisServers;
import dev.fenceguard.testkit.servers.TcpProxy;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Zombie storms with faults. The lock backend runs on a private redis-server that is killed and
 * restarted without persistence, or flushed, mid-storm; the counter (the guarded resource) lives on the
 * shared Redis under a key prefix: a different store than the one destroyed, since losing the resource
 * itself is data loss, not a fencing failure. The fences stay monotonic only because the lock uses the
 * clock-floored strategy. Then the client's connections (lock and resource) are cut and delayed through
 * a loopback proxy. In each: no stale write applied, no update lost, every error a mapped
 * FenceGuardException, and the storm ends on its own. Size: 200 attempts, or
 * {@code -Dfenceguard.storm.attempts=N}.
 */
class RedisFaultStormTest {

    /** Runs a storm whose lock lives on {@code server}, counter on the shared Redis. */
    private static ZombieStorm.Result stormOnPrivateLockServer(RedisServers.Server server, String label,
            java.util.function.Function<ZombieStorm.Builder, ZombieStorm.Builder> faults) throws Exception {
        String prefix = TestRedis.keyPrefix("faultstorm");
        RedisClient lockClient = RedisClient.create(RedisStorms.uri(server.uri()));
        RedisClient resourceClient = RedisClient.create(RedisStorms.uri(TestRedis.server().uri()));
        // Two servers, so two FenceGuardRedis: the lock backend of one, the fenced writes of the other.
        try (FenceGuardRedis lockServer = FenceGuardRedis.builder(lockClient).withFenceStrategy(FenceStrategy.CLOCK_FLOORED).build();
                StatefulRedisConnection<String, String> resource = resourceClient.connect();
                FenceGuardRedis resourceServer = FenceGuardRedis.builder(resource).withFenceKeyPrefix(prefix + "fence:")
                        .withMetrics(LockMetrics.none()).build()) {
            FencedRedis fenced = resourceServer.fencedWrites();
            ZombieStorm.Builder storm = RedisStorms.storm(lockServer.lockBackend(), "counter", RedisStorms.counter(fenced, resource.sync(), prefix + "counter"),
                    ZombieStorm.attemptsProperty(200));
            ZombieStorm.Result r = faults.apply(storm).build().run();
            System.out.println("STORM redis, " + label + ": " + r.summary());
            r.firstErrors().forEach((code, e) -> System.out.println("  first " + code + ": " + e.getMessage()));
            return r;
        } finally {
            lockClient.shutdown();
            resourceClient.shutdown();
            RedisSupport.deleteKeys(prefix);
        }
    }

    @Test
    void theLockServerKilledAndRestartedWithoutPersistenceMidStorm() throws Exception {
        int size = ZombieStorm.attemptsProperty(200);
        try (RedisServers.Server server = RedisServers.start()) {
            ZombieStorm.Result r = stormOnPrivateLockServer(server, "lock server killed and restarted empty", s -> s
                    .withFault(size / 3, () -> {
                        server.process().kill();
                        server.restart();
                    })
                    .withFault(2 * size / 3, () -> {
                        server.process().kill();
                        server.restart();
                    }));
            r.requireSafe();
            assertThat(r.faultsRun()).isEqualTo(2);
            assertThat(r.applied()).as("the storm went on after the restarts").isPositive();
        }
    }

    @Test
    void theLockServerFlushedMidStorm() throws Exception {
        int size = ZombieStorm.attemptsProperty(200);
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient admin = RedisClient.create(RedisStorms.uri(server.uri()));
            try (StatefulRedisConnection<String, String> c = admin.connect()) {
                ZombieStorm.Result r = stormOnPrivateLockServer(server, "lock server FLUSHALL", s -> s
                        .withFault(size / 3, () -> c.sync().flushall())
                        .withFault(2 * size / 3, () -> c.sync().flushall()));
                r.requireSafe();
                assertThat(r.faultsRun()).isEqualTo(2);
            } finally {
                admin.shutdown();
            }
        }
    }

    @Test
    void theConnectionsCutAndDelayedMidStorm() throws Exception {
        int size = ZombieStorm.attemptsProperty(200);
        URI shared = TestRedis.server().uri();
        String prefix = TestRedis.keyPrefix("proxystorm");
        try (TcpProxy proxy = TcpProxy.start(shared.getHost(), shared.getPort() > 0 ? shared.getPort() : 6379)) {
            RedisClient client = RedisClient.create(RedisStorms.uri(URI.create("redis://127.0.0.1:" + proxy.port())));
            try (StatefulRedisConnection<String, String> c = client.connect();
                    FenceGuardRedis redis = FenceGuardRedis.builder(c).withKeyPrefix(prefix).withFenceKeyPrefix(prefix + "fence:")
                            .withMetrics(LockMetrics.none()).build()) {
                RedisLockBackend backend = redis.lockBackend();
                FencedRedis fenced = redis.fencedWrites();
                int delayed = Math.max(2, size / 2);
                ZombieStorm.Result r = RedisStorms.storm(backend, "counter", RedisStorms.counter(fenced, c.sync(), prefix + "counter"), size)
                        .withFault(Math.max(1, size / 4), proxy::cutConnections)
                        // 60 ms each way, for 10 attempts: a round trip (120 ms) outlasts the 100 ms lease, so every grant arrives
                        // invalid and is released, and each attempt retries for its whole wait (about 2 s: 20 attempts took 38 s of CI).
                        .withFault(delayed, () -> proxy.delay(Duration.ofMillis(60)))
                        .withFault(Math.min(size, delayed + 10), () -> proxy.delay(Duration.ZERO))
                        .withFault(Math.min(size, delayed + 10), proxy::cutConnections)
                        .build().run();
                System.out.println("STORM redis, connections cut and delayed: " + r.summary());
                r.firstErrors().forEach((code, e) -> System.out.println("  first " + code + ": " + e.getMessage()));
                r.requireSafe();
                assertThat(r.faultsRun()).isEqualTo(4);
            } finally {
                client.shutdown();
            }
        } finally {
            RedisSupport.deleteKeys(prefix);
        }
    }
}
