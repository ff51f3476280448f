package dev.fenceguard.migrations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.testkit.servers.TestPostgres;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class IdempotencyTableMigrationTest {

    private static TestPostgres.Schema schema;
    private static DataSource ds;

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("idemtable");
        ds = schema.dataSource();
    }

    @AfterAll
    static void tearDown() {
        schema.close();
    }

    @Test
    void createsTheDocumentedLayoutOnceBesideALockTable() {
        assertThat(FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable("locks").migrate()).isEqualTo(2);
        assertThat(FenceGuardMigrations.idempotencyBuilder(ds).withSchema(schema.name()).withTable("idem_a").migrate()).isEqualTo(1);
        assertThat(FenceGuardMigrations.idempotencyBuilder(ds).withSchema(schema.name()).withTable("idem_a").migrate()).isZero();
        // The stored layout is a compatibility promise (docs/idempotency-store.md): this test pins it.
        assertThat(Db.rows(schema, "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                + "WHERE table_schema = '" + schema.name() + "' AND table_name = 'idem_a' ORDER BY ordinal_position"))
                .containsExactly(
                        "idem_key|text|NO",
                        "state|character|NO",
                        "fingerprint|text|NO",
                        "fence|bigint|NO",
                        "expires_at|timestamp with time zone|NO",
                        "retain_until|timestamp with time zone|NO",
                        "result|bytea|NO");
        assertThat(Db.rows(schema, "SELECT indexname FROM pg_indexes WHERE schemaname = '" + schema.name()
                + "' AND tablename = 'idem_a' ORDER BY 1")).containsExactly("idem_a_pkey", "idem_a_retain_until");
    }

    @Test
    void checkConstraintsRefuseUnknownStatesAndFencesOutOfRange() {
        FenceGuardMigrations.idempotencyBuilder(ds).withSchema(schema.name()).withTable("idem_b").migrate();
        String t = schema.name() + ".idem_b";
        String cols = " (idem_key, state, fingerprint, fence, expires_at, retain_until, result) VALUES ";
        assertThatThrownBy(() -> Db.exec(schema, "INSERT INTO " + t + cols + "('k', 'X', 'aa', 1, now(), now(), '')"))
                .hasMessageContaining("check constraint");
        assertThatThrownBy(() -> Db.exec(schema, "INSERT INTO " + t + cols + "('k', 'P', 'aa', 0, now(), now(), '')"))
                .hasMessageContaining("check constraint");
    }

    @Test
    void theDefaultTableNameIsDocumented() {
        assertThat(FenceGuardMigrations.DEFAULT_IDEMPOTENCY_TABLE).isEqualTo("fence_guard_idempotency");
        assertThat(FenceGuardMigrations.IDEMPOTENCY_LOCATION).isEqualTo("classpath:db/fence-guard/postgresql-idempotency");
    }
}
