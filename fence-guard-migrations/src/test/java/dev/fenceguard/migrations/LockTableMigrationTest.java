package dev.fenceguard.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.testkit.servers.TestPostgres;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class LockTableMigrationTest {

    private static TestPostgres.Schema schema;
    private static DataSource ds;

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("locktable");
        ds = schema.dataSource();
    }

    @AfterAll
    static void tearDown() {
        schema.close();
    }

    @Test
    void createsTheDocumentedLayoutOnceAndIsANoOpAfterwards() throws Exception {
        assertThat(FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable("locks_a").migrate()).isEqualTo(1);
        assertThat(FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable("locks_a").migrate()).isZero();
        // The stored layout is a compatibility promise (docs/postgresql.md): this test pins it.
        assertThat(Db.rows(schema, "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                + "WHERE table_schema = '" + schema.name() + "' AND table_name = 'locks_a' ORDER BY ordinal_position"))
                .containsExactly(
                        "lock_key|text|NO",
                        "fence|bigint|NO",
                        "lock_id|text|YES",
                        "expires_at|timestamp with time zone|YES",
                        "acquired_at|timestamp with time zone|YES");
        assertThat(Db.one(schema, "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                + "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = '" + schema.name() + ".locks_a'::regclass AND i.indisprimary"))
                .isEqualTo("lock_key");
    }

    @Test
    void twoLockTablesCanShareASchema() throws Exception {
        assertThat(FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable("locks_b").migrate()).isEqualTo(1);
        assertThat(FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable("locks_c").migrate()).isEqualTo(1);
        assertThat(Db.rows(schema, "SELECT table_name FROM information_schema.tables WHERE table_schema = '" + schema.name()
                + "' AND table_name IN ('locks_b', 'locks_c') ORDER BY 1")).containsExactly("locks_b", "locks_c");
    }

    @Test
    void checkConstraintsRefuseFencesOutOfRangeAndHalfHeldRows() {
        FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable("locks_d").migrate();
        String t = schema.name() + ".locks_d";
        assertThatThrownBy(() -> Db.exec(schema, "INSERT INTO " + t + " (lock_key, fence) VALUES ('k', 900000000000001)"))
                .hasMessageContaining("check constraint");
        assertThatThrownBy(() -> Db.exec(schema, "INSERT INTO " + t + " (lock_key, fence, lock_id) VALUES ('k', 1, 'x')"))
                .hasMessageContaining("check constraint");
    }

    @Test
    void badNamesAreRefusedBeforeAnySql() throws Exception {
        for (String bad : List.of("locks\"; DROP TABLE x; --", "a b", "locks--", "tab\0le", "ünïcode", "x".repeat(10_000), "")) {
            assertThatThrownBy(() -> FenceGuardMigrations.builder(ds).withTable(bad))
                    .as("table name %s", bad.length() > 20 ? bad.substring(0, 20) : bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("table must");
            assertThatThrownBy(() -> FenceGuardMigrations.builder(ds).withSchema(bad)).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(Db.rows(schema, "SELECT table_name FROM information_schema.tables WHERE table_schema = '" + schema.name()
                + "' AND table_name LIKE '%DROP%'")).isEmpty();
        assertThatThrownBy(() -> FenceGuardMigrations.placeholders("public", "x;y"))
                .hasMessage("table must be a plain SQL identifier (an ASCII letter or '_', then letters, digits or '_'), was 'x;y'");
    }
}
