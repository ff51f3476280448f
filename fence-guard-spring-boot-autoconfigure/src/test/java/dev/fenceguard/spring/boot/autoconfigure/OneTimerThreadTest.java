package dev.fenceguard.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.cloud.firestore.Firestore;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.firestore.FenceGuardFirestore;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.testkit.servers.TestMariaDb;
import dev.fenceguard.testkit.servers.TestPostgres;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Issue #28, "one scheduler thread for all deadline work": with a lock client on every backend in use
 * at once (PostgreSQL, MariaDB, Redis, Firestore, in memory), each having made real calls, so every
 * module's deadline machinery has run (the lock client's call bounds and renewals, the JDBC backends'
 * connection-abort deadlines, the Firestore backend's gRPC deadlines), the process has exactly one
 * platform thread of fence-guard's: {@code fence-guard-timer}. (The JDBC executor's virtual threads are
 * not timers and are not platform threads.) Not a Spring test: this module is the one whose tests see
 * every backend module.
 */
class OneTimerThreadTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    @Test
    void everyBackendInUseSharesTheOneTimerThread() throws Exception {
        String redisPrefix = "fg-threads-" + UUID.randomUUID().toString().substring(0, 8) + ":";
        RedisClient redisClient = TestServers.redisClient();
        Firestore firestore = TestServers.firestore("threads");
        try (TestPostgres.Schema schema = TestServers.schema("threads");
                TestMariaDb.Database maria = TestMariaDb.server().newDatabase("threads");
                HikariDataSource mariaPool = pool(maria.jdbcUrl("mariadb", ""));
                FenceGuardRedis redis = FenceGuardRedis.builder(redisClient).withKeyPrefix(redisPrefix).build()) {
            FenceGuardMigrations.builder(schema.dataSource()).withSchema(schema.name()).migrate();
            FenceGuardMigrations.builder(mariaPool).withSchema(maria.name()).migrate();
            List<LockBackend> backends = List.of(
                    FenceGuardJdbc.builder(schema.dataSource()).withSchema(schema.name()).build().lockBackend(),
                    FenceGuardJdbc.builder(mariaPool).withSchema(maria.name()).build().lockBackend(),
                    redis.lockBackend(),
                    FenceGuardFirestore.builder(firestore).build().lockBackend(),
                    new InMemoryLockBackend());
            for (LockBackend backend : backends) {
                LockClient locks = LockClient.builder(backend).withMetrics(LockMetrics.none()).build();
                Lease lease = locks.tryAcquire("threads:" + backend.name(), TTL).orElseThrow();
                assertThat(locks.extend(lease, TTL)).as("%s extends", backend.name()).isTrue();
                assertThat(locks.release(lease)).as("%s releases", backend.name()).isTrue();
            }
            assertThat(fenceGuardPlatformThreads()).as("fence-guard's platform threads with every backend in use")
                    .containsExactly("fence-guard-timer");
        } finally {
            TestServers.deleteRedisKeys(redisPrefix);
            redisClient.shutdown();
            firestore.close();
        }
    }

    private static HikariDataSource pool(String url) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(2);
        return new HikariDataSource(config);
    }

    private static List<String> fenceGuardPlatformThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> !t.isVirtual() && t.getName().startsWith("fence-guard"))
                .map(Thread::getName)
                .sorted()
                .toList();
    }
}
