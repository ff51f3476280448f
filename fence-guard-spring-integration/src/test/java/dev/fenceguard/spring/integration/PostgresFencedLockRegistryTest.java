package dev.fenceguard.spring.integration;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.servers.TestPostgres;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link FencedLockRegistryContract} on PostgreSQL: the lock table of fence-guard-jdbc, writes fenced by {@link FencedTable}. */
class PostgresFencedLockRegistryTest extends FencedLockRegistryContract {

    static TestPostgres.Schema schema;
    static DataSource dataSource;
    static LockBackend backend;
    static FencedTable resources;

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("si_registry");
        dataSource = schema.dataSource();
        FenceGuardMigrations.builder(dataSource).withSchema(schema.name()).migrate();
        schema.execute("CREATE TABLE " + schema.name() + ".resources (id TEXT PRIMARY KEY, written_with BIGINT,"
                + " fence_token BIGINT NOT NULL DEFAULT 0)");
        backend = FenceGuardJdbc.builder(dataSource).withSchema(schema.name()).build().lockBackend();
        resources = FencedTable.builder(schema.name(), "resources", "id", "fence_token").withKeyType(String.class).build();
    }

    @AfterAll
    static void tearDown() {
        schema.close();
    }

    @Override
    protected LockBackend backend() {
        return backend;
    }

    @Override
    protected WriteOutcome write(String resource, FenceToken fence) {
        return resources.on(dataSource).upsert(resource, fence, Assignments.of("written_with", fence.value()));
    }
}
