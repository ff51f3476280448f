package dev.fenceguard.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.servers.TestMariaDb;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The lock backend over a DataSource matches its database: MariaDB through MariaDB Connector/J and MySQL
 * Connector/J (the latter calls the server "MySQL"), MySQL's backend when set, with the lock table made by
 * Spring Boot's Flyway run in the connection's database; a database fence-guard does not support fails
 * startup naming it. PostgreSQL is {@link FenceGuardAutoConfigurationTest}'s.
 */
class JdbcDatabasesTest {

    final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(FenceGuardAutoConfigurationTest.FENCE_GUARD);

    static HikariDataSource pool(TestMariaDb.Database db, String driver) {
        HikariDataSource pool = new HikariDataSource();
        pool.setJdbcUrl(db.jdbcUrl(driver, ""));
        pool.setMaximumPoolSize(4);
        return pool;
    }

    /** Takes the lock and gives it back, checking the row the lock table holds meanwhile and after. */
    static void lockAndRelease(LockClient client, TestMariaDb.Database db, String table, String key) throws InterruptedException {
        String row = "SELECT fence, lock_id IS NULL FROM " + table + " WHERE lock_key = '" + key + "'";
        Optional<Long> fence = client.withLock(key, Duration.ofSeconds(10), Duration.ofSeconds(5), (Lease lease) -> {
            assertThat(db.query(row)).as("held").containsExactly(lease.fence().value() + "|0");
            return lease.fence().value();
        });
        assertThat(fence).isPresent();
        assertThat(db.query(row)).as("released").containsExactly(fence.get() + "|1");
        assertThat(client.lookup(key)).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"mariadb", "mysql"})
    void aMariaDbDataSourceGetsTheMariaDbBackendAndItsLockTableThroughEitherDriver(String driver) {
        try (TestMariaDb.Database db = TestMariaDb.server().newDatabase("boot" + driver); HikariDataSource pool = pool(db, driver)) {
            runner.withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class))
                    .withBean("dataSource", DataSource.class, () -> pool)
                    .run(ctx -> {
                        assertThat(ctx).hasNotFailed();
                        assertThat(ctx.getBean(LockBackend.class)).asString()
                                .startsWith("MariaDbLockBackend[`" + db.name() + "`.`fence_guard_locks`, DENSE");
                        lockAndRelease(ctx.getBean(LockClient.class), db, "fence_guard_locks", "boot:" + driver);
                        Health health = ctx.getBean(FenceGuardHealthIndicator.class).health();
                        assertThat(health.getStatus()).isEqualTo(Status.UP);
                        assertThat(health.getDetails()).containsEntry("backend", "mariadb");
                    });
            assertThat(db.query("SELECT table_name FROM information_schema.tables WHERE table_schema = '" + db.name()
                    + "' ORDER BY table_name")).as("the application's V1 and the lock table (with its floor table), each with its Flyway history")
                    .containsExactly("app_orders", "fence_guard_history_fence_guard_locks", "fence_guard_locks", "fence_guard_lock_floors", "flyway_schema_history");
        }
    }

    @Test
    void aNamedDatabaseLeavesTheEntryToTheFirstCall() {
        // fence-guard.jdbc.database spares startup the question; FenceGuardJdbc still learns the database itself
        // (on the first call: startup's warm-up here; FenceGuardAutoConfigurationTest covers a DataSource that does not answer).
        try (TestMariaDb.Database db = TestMariaDb.server().newDatabase("bootnamed"); HikariDataSource pool = pool(db, "mysql")) {
            runner.withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class))
                    .withBean("dataSource", DataSource.class, () -> pool)
                    .withPropertyValues("fence-guard.jdbc.database=mariadb", "fence-guard.jdbc.table=named_locks",
                            "fence-guard.fence-strategy=clock-floored")
                    .run(ctx -> {
                        assertThat(ctx).hasNotFailed();
                        LockBackend backend = ctx.getBean(LockBackend.class);
                        assertThat(backend.name()).isEqualTo("mariadb");
                        lockAndRelease(ctx.getBean(LockClient.class), db, "named_locks", "boot:named");
                        assertThat(backend.toString()).startsWith("MariaDbLockBackend[`" + db.name() + "`.`named_locks`, CLOCK_FLOORED");
                    });
        }
    }

    @Test
    void aMissingLockTableOnMariaDbFailsStartupNamingIt() {
        try (TestMariaDb.Database db = TestMariaDb.server().newDatabase("bootnotable"); HikariDataSource pool = pool(db, "mariadb")) {
            runner.withBean("dataSource", DataSource.class, () -> pool).run(ctx -> assertThat(ctx).hasFailed().getFailure()
                    .hasMessageContaining("fence-guard's lock table `" + db.name() + "`.`fence_guard_locks` does not exist")
                    .hasMessageContaining("withSchema(\"" + db.name() + "\")"));
        }
    }

    @Test
    void aDatabaseFenceGuardDoesNotSupportFailsStartupNamingIt() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:fenceguard;DB_CLOSE_DELAY=-1");
        for (ApplicationContextRunner r : List.of(runner, runner.withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class)))) {
            r.withBean("dataSource", DataSource.class, () -> h2).run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                    .hasMessageStartingWith("fence-guard has no lock backend for the database of the DataSource bean, H2 ")
                    .hasMessageContaining("it supports PostgreSQL, MariaDB and MySQL"));
        }
    }
}
