package dev.fenceguard.shedlock;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.servers.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** ShedLock's own provider suite, unmodified, on the lock table of the test PostgreSQL. */
class PostgresShedLockProviderTest extends ShedLockSuite {

    private static TestPostgres.Schema schema;
    private static FenceGuardJdbc jdbc;
    private static LockClient locks;

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("shedlock");
        FenceGuardMigrations.builder(schema.dataSource()).withSchema(schema.name()).migrate();
        jdbc = FenceGuardJdbc.builder(schema.dataSource()).withSchema(schema.name()).build();
        locks = clientOf(jdbc.lockBackend());
    }

    @AfterAll
    static void tearDown() {
        jdbc.close();
        schema.close();
    }

    @Override
    LockClient locks() {
        return locks;
    }
}
