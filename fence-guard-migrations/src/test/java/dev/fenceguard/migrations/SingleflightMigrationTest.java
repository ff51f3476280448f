package dev.fenceguard.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.testkit.servers.TestPostgres;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SingleflightMigrationTest {

    private static TestPostgres.Schema schema;
    private static DataSource ds;

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("sftable");
        ds = schema.dataSource();
    }

    @AfterAll
    static void tearDown() {
        schema.close();
    }

    @Test
    void createsTheDocumentedLayoutOnceBesideALockTable() throws Exception {
        assertThat(FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable("locks").migrate()).isEqualTo(2);
        assertThat(FenceGuardMigrations.singleflightBuilder(ds).withSchema(schema.name()).withTable("flights").migrate()).isEqualTo(1);
        assertThat(FenceGuardMigrations.singleflightBuilder(ds).withSchema(schema.name()).withTable("flights").migrate()).isZero();
        // Its own Flyway history, apart from the lock table's (both tables' migrations start at V1).
        assertThat(Db.rows(schema, "SELECT table_name FROM information_schema.tables WHERE table_schema = '" + schema.name()
                + "' AND table_name LIKE '%history%' ORDER BY table_name"))
                .contains("fence_guard_history_locks", "fence_guard_sf_history_flights");
        // The stored layout is a compatibility promise (docs/singleflight.md): this test pins it.
        assertThat(Db.rows(schema, "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                + "WHERE table_schema = '" + schema.name() + "' AND table_name = 'flights' ORDER BY ordinal_position"))
                .containsExactly(
                        "flight_key|text|NO",
                        "flight_fence|bigint|NO",
                        "result|bytea|YES",
                        "result_fence|bigint|YES",
                        "result_expires_at|timestamp with time zone|YES",
                        "updated_at|timestamp with time zone|NO");
    }

    @Test
    void checkConstraintsRefuseHalfPublishedRowsAndResultsNewerThanTheirFlight() {
        FenceGuardMigrations.singleflightBuilder(ds).withSchema(schema.name()).withTable("flights_b").migrate();
        String t = schema.name() + ".flights_b";
        assertThatThrownBy(() -> Db.exec(schema, "INSERT INTO " + t + " (flight_key, flight_fence, result, updated_at) "
                + "VALUES ('k', 1, 'x', now())")).as("a result without fence and expiry").hasMessageContaining("check constraint");
        assertThatThrownBy(() -> Db.exec(schema, "INSERT INTO " + t + " (flight_key, flight_fence, result, result_fence, "
                + "result_expires_at, updated_at) VALUES ('k', 1, 'x', 2, now(), now())")).as("a result newer than its flight")
                .hasMessageContaining("check constraint");
    }

    @Test
    void badNamesAreRefusedBeforeAnySql() {
        assertThatThrownBy(() -> FenceGuardMigrations.singleflightBuilder(ds).withTable("x; DROP TABLE y")).hasMessageStartingWith("table must");
        assertThatThrownBy(() -> FenceGuardMigrations.singleflightBuilder(ds).withSchema("")).hasMessageStartingWith("schema must");
    }
}
