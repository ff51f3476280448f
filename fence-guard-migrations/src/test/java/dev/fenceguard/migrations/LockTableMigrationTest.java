package dev.fenceguard.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.testkit.servers.TestPostgres;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
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
        assertThat(FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable("locks_a").migrate()).isEqualTo(2);
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
    void aLockTableOfTheFirstVersionGetsItsFloorRowWithoutARewrite() {
        // Tried: a database migrated before the floor existed (V1 only, rows in use), then today's migrate().
        Flyway.configure().dataSource(ds).locations(FenceGuardMigrations.LOCATION).schemas(schema.name()).createSchemas(true)
                .table(FenceGuardMigrations.historyTable("locks_v1")).baselineOnMigrate(true).baselineVersion("0")
                .placeholders(FenceGuardMigrations.placeholders(schema.name(), "locks_v1")).target("1").load().migrate();
        String t = schema.name() + ".locks_v1";
        Db.exec(schema, "INSERT INTO " + t + " (lock_key, fence) VALUES ('a', 7), ('b', 3)");
        String fileBefore = Db.one(schema, "SELECT relfilenode FROM pg_class WHERE oid = '" + t + "'::regclass");

        assertThat(FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable("locks_v1").migrate()).isEqualTo(1);

        assertThat(Db.one(schema, "SELECT relfilenode FROM pg_class WHERE oid = '" + t + "'::regclass"))
                .as("the lock table is not rewritten").isEqualTo(fileBefore);
        assertThat(Db.rows(schema, "SELECT lock_key || '=' || fence FROM " + t + " ORDER BY 1")).containsExactly("a=7", "b=3");
        assertThat(Db.rows(schema, "SELECT lock_table || '=' || fence_floor FROM " + schema.name()
                + ".fence_guard_lock_floors WHERE lock_table = 'locks_v1'")).containsExactly("locks_v1=0");
        assertThat(FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable("locks_v1").migrate()).isZero();
    }

    @Test
    void eachLockTableHasItsFloorRowInTheSchemasFloorTable() {
        FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable("locks_f1").migrate();
        FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable("locks_f2").migrate();
        // The floor table's layout is a compatibility promise too (docs/postgresql.md).
        assertThat(Db.rows(schema, "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                + "WHERE table_schema = '" + schema.name() + "' AND table_name = 'fence_guard_lock_floors' ORDER BY ordinal_position"))
                .containsExactly("lock_table|text|NO", "fence_floor|bigint|NO");
        assertThat(Db.rows(schema, "SELECT lock_table || '=' || fence_floor FROM " + schema.name()
                + ".fence_guard_lock_floors WHERE lock_table IN ('locks_f1', 'locks_f2') ORDER BY 1"))
                .containsExactly("locks_f1=0", "locks_f2=0");
        assertThatThrownBy(() -> Db.exec(schema, "UPDATE " + schema.name() + ".fence_guard_lock_floors SET fence_floor = -1"))
                .hasMessageContaining("check constraint");
    }

    @Test
    void twoLockTablesCanShareASchema() throws Exception {
        assertThat(FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable("locks_b").migrate()).isEqualTo(2);
        assertThat(FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable("locks_c").migrate()).isEqualTo(2);
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
