package dev.fenceguard.shedlock;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.servers.TestMariaDb;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** ShedLock's own provider suite, unmodified, on the lock table of the test MariaDB. */
class MariaDbShedLockProviderTest extends ShedLockSuite {

    private static TestMariaDb.Database db;
    private static FenceGuardJdbc jdbc;
    private static LockClient locks;

    @BeforeAll
    static void setUp() {
        db = TestMariaDb.server().newDatabase("shedlock");
        FenceGuardMigrations.builder(db.dataSource()).withSchema(db.name()).migrate();
        jdbc = FenceGuardJdbc.builder(db.dataSource()).withSchema(db.name()).build();
        locks = clientOf(jdbc.lockBackend());
    }

    @AfterAll
    static void tearDown() {
        jdbc.close();
        db.close();
    }

    @Override
    LockClient locks() {
        return locks;
    }
}
