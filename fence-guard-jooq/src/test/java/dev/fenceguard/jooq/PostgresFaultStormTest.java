package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.LockBackends;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.ZombieStorm;
import dev.fenceguard.testkit.servers.PostgresServers;
import dev.fenceguard.testkit.servers.TcpProxy;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Zombie storms with faults on a private PostgreSQL (lock table and counter on it): the server
 * restarted mid-storm, and the client's connections cut and delayed through a loopback proxy. In each:
 * no stale write applied, no update lost, every error a mapped FenceGuardException, and the storm ends
 * on its own. Size: 200 attempts, or {@code -Dfenceguard.storm.attempts=N}.
 *
 * <p>The lock uses the dense fence strategy: a restart of one PostgreSQL server keeps every committed
 * fence (the clock floor is for failover to an asynchronous replica, which this is not), so the
 * storm shows dense fences stay monotonic across a restart.
 */
class PostgresFaultStormTest {

    private static PostgresServers.Server server;

    @BeforeAll
    static void start() {
        server = PostgresServers.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static LockBackend backend(HikariDataSource ds, String schema) {
        FenceGuardMigrations.builder(ds).withSchema(schema).withTable("locks").migrate();
        return LockBackends.postgres(ds, schema, "locks");
    }

    private static void createSchema(HikariDataSource ds, String schema) throws Exception {
        try (var c = ds.getConnection(); var s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
        }
    }

    @Test
    void theServerRestartedTwiceMidStorm() throws Exception {
        int size = ZombieStorm.attemptsProperty(200);
        try (HikariDataSource ds = PgStorms.pool(server.jdbcUrl(), "restart")) {
            createSchema(ds, "restart");
            ZombieStorm.FencedCounter counter = PgStorms.counter(ds, "restart", "counters");
            ZombieStorm.Result r = PgStorms.storm(backend(ds, "restart"), counter, size)
                    .withFault(size / 3, server::restart)
                    .withFault(2 * size / 3, server::restart)
                    .build().run();
            System.out.println("STORM postgres, restarted mid-storm: " + r.summary());
            r.firstErrors().forEach((code, e) -> System.out.println("  first " + code + ": " + e.getMessage()));
            r.requireSafe();
            assertThat(r.faultsRun()).isEqualTo(2);
            assertThat(r.applied()).as("the storm went on after the restarts").isPositive();
        }
    }

    @Test
    void theConnectionsCutAndDelayedMidStorm() throws Exception {
        int size = ZombieStorm.attemptsProperty(200);
        try (TcpProxy proxy = TcpProxy.start("127.0.0.1", server.port());
                HikariDataSource ds = PgStorms.pool(server.jdbcUrl().replace(":" + server.port() + "/", ":" + proxy.port() + "/"),
                        "proxy")) {
            createSchema(ds, "proxied");
            ZombieStorm.FencedCounter counter = PgStorms.counter(ds, "proxied", "counters");
            // Cut, then 60 ms each way for 10 attempts, then cut again. A round trip (120 ms) outlasts the 100 ms lease, so
            // every grant arrives invalid and is released, and each attempt retries for its whole wait (about 2 s: 20
            // attempts took 38 s of CI).
            int delayed = Math.max(2, size / 2);
            ZombieStorm.Result r = PgStorms.storm(backend(ds, "proxied"), counter, size)
                    .withFault(Math.max(1, size / 4), proxy::cutConnections)
                    .withFault(delayed, () -> proxy.delay(Duration.ofMillis(60)))
                    .withFault(Math.min(size, delayed + 10), () -> proxy.delay(Duration.ZERO))
                    .withFault(Math.min(size, delayed + 10), proxy::cutConnections)
                    .build().run();
            System.out.println("STORM postgres, connections cut and delayed: " + r.summary());
            r.firstErrors().forEach((code, e) -> System.out.println("  first " + code + ": " + e.getMessage()));
            r.requireSafe();
            assertThat(r.faultsRun()).isEqualTo(4);
        }
    }
}
