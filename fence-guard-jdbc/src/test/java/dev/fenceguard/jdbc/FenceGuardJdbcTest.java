package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.jdbc.testing.CountingConnections;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.migrations.FenceGuardMigrations;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The one entry of fence-guard-jdbc: it learns the database once and hands out what that database offers. */
class FenceGuardJdbcTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static PgTestSupport pg;
    private static MariaTestSupport maria;
    private static MariaTestSupport connectorJ;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("entry");
        maria = new MariaTestSupport("entry");
        connectorJ = new MariaTestSupport("entry_cj", "mysql", "");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
        maria.close();
        connectorJ.close();
    }

    @Test
    void postgresqlGetsItsLockBackendIdempotencyBackendAndFlightStore() {
        FenceGuardMigrations.builder(pg.ds).withSchema(pg.schema.name()).migrate();
        try (FenceGuardJdbc jdbc = FenceGuardJdbc.builder(pg.ds).withSchema(pg.schema.name()).build()) {
            assertThat(jdbc.lockBackend()).isInstanceOf(PostgresLockBackend.class);
            assertThat(jdbc.idempotencyBackend()).isInstanceOf(PostgresIdempotencyBackend.class);
            assertThat(jdbc.flightStore()).isInstanceOf(PostgresFlightStore.class);
            assertThat(jdbc.lockBackend()).as("one backend per entry").isSameAs(jdbc.lockBackend());
            takesAndReleasesALock(jdbc);
            assertThat(pg.rows("SELECT fence FROM " + pg.q("fence_guard_locks") + " WHERE lock_key = 'entry:k'")).containsExactly("2");
        }
    }

    @Test
    void mariaDbIsRecognisedThroughEitherDriverAndOffersTheLockBackendOnly() {
        for (MariaTestSupport db : List.of(maria, connectorJ)) {
            FenceGuardMigrations.builder(db.ds).withSchema(db.db.name()).migrate();
            try (FenceGuardJdbc jdbc = FenceGuardJdbc.builder(db.ds).withSchema(db.db.name()).build()) {
                assertThat(jdbc.lockBackend()).isInstanceOf(MariaDbLockBackend.class);
                takesAndReleasesALock(jdbc);
                assertThatThrownBy(jdbc::idempotencyBackend).isInstanceOf(UnsupportedOperationException.class)
                        .hasMessage("fence-guard-jdbc has an idempotency backend for PostgreSQL only; this data source is MariaDB");
                assertThatThrownBy(jdbc::flightStore).isInstanceOf(UnsupportedOperationException.class)
                        .hasMessage("fence-guard-jdbc has a flight store for PostgreSQL only; this data source is MariaDB");
            }
        }
    }

    @Test
    void theDatabaseIsLearntWithOneConnectionPerDataSource() {
        AtomicInteger connections = new AtomicInteger();
        // A data source no entry has seen yet (the proxy's equals and hashCode are those of what it wraps).
        DataSource counted = CountingConnections.of(pg.schema.dataSource(), connections);
        FenceGuardJdbc first = FenceGuardJdbc.builder(counted).withSchema(pg.schema.name()).withLockTable("counted_locks").build();
        assertThat(connections).as("build() learns the database").hasValue(1);
        FenceGuardJdbc second = FenceGuardJdbc.builder(counted).withSchema(pg.schema.name()).build();
        first.lockBackend();
        second.lockBackend();
        assertThat(connections).as("a second entry on the same data source, and handing out stores, ask nothing").hasValue(1);
    }

    @Test
    void aDatabaseFenceGuardDoesNotSupportIsRefusedByName() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:fence_guard_entry");
        assertThatThrownBy(() -> FenceGuardJdbc.builder(h2).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("fence-guard-jdbc's stores support PostgreSQL, MariaDB and MySQL; the connection is to 'H2'");
    }

    @Test
    void mariaDbAndMySqlNeedTheSchemaOfTheTables() {
        assertThatThrownBy(() -> FenceGuardJdbc.builder(connectorJ.ds).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("schema must be given on MariaDB (the database of fence-guard's tables): withSchema(\"app\")");
    }

    @Test
    void badSettingsFailBeforeAnyIo() {
        AtomicInteger connections = new AtomicInteger();
        FenceGuardJdbc.Builder builder = FenceGuardJdbc.builder(CountingConnections.of(pg.ds, connections));
        assertThatThrownBy(() -> FenceGuardJdbc.builder(null)).isInstanceOf(NullPointerException.class).hasMessage("dataSource");
        assertThatThrownBy(() -> builder.withSchema("app; DROP")).hasMessageStartingWith("schema must be a plain SQL identifier");
        assertThatThrownBy(() -> builder.withLockTable("a b")).hasMessageStartingWith("lock table must be a plain SQL identifier");
        assertThatThrownBy(() -> builder.withIdempotencyTable("")).hasMessage("idempotency table must not be empty");
        assertThatThrownBy(() -> builder.withFlightTable(null)).hasMessage("flight table must not be null");
        assertThatThrownBy(() -> builder.withFenceStrategy(null)).isInstanceOf(NullPointerException.class).hasMessage("strategy");
        assertThatThrownBy(() -> builder.withExecutor(null)).isInstanceOf(NullPointerException.class).hasMessage("executor");
        assertThatThrownBy(() -> builder.withListenerDataSource(null)).isInstanceOf(NullPointerException.class);
        assertThat(connections).hasValue(0);
    }

    @Test
    void jooqIsNotOnThisModulesClassPath() {
        // The lock contract tests of this module run with what a user of fence-guard-jdbc alone has.
        assertThatThrownBy(() -> Class.forName("org.jooq.DSLContext")).isInstanceOf(ClassNotFoundException.class);
    }

    private static void takesAndReleasesALock(FenceGuardJdbc jdbc) {
        LockClient client = LockClient.builder(jdbc.lockBackend()).withMetrics(LockMetrics.none()).build();
        try (Lease lease = client.tryAcquire("entry:k", TTL).orElseThrow()) {
            assertThat(client.tryAcquire("entry:k", TTL)).as("held").isEmpty();
            assertThat(lease.isValid()).isTrue();
        }
        try (Lease again = client.tryAcquire("entry:k", TTL).orElseThrow()) {
            assertThat(again.fence().value()).as("released, then taken again").isEqualTo(2);
        }
    }
}
