package dev.fenceguard.shedlock;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.servers.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * ShedLock's own provider suite, unmodified, on the lock table of the test PostgreSQL, through a connection pool
 * as an application's scheduler would have: its fuzz test makes thousands of calls, and a new PostgreSQL
 * connection per call (about 19 ms each on the CI machine, `pgbench -C`) made it take 100 s.
 */
class PostgresShedLockProviderTest extends ShedLockSuite {

    private static TestPostgres.Schema schema;
    private static HikariDataSource pool;
    private static FenceGuardJdbc jdbc;
    private static LockClient locks;

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("shedlock");
        FenceGuardMigrations.builder(schema.dataSource()).withSchema(schema.name()).migrate();
        HikariConfig config = new HikariConfig();
        config.setDataSource(schema.dataSource());
        config.setMaximumPoolSize(10);
        config.setPoolName("shedlock-suite");
        pool = new HikariDataSource(config);
        jdbc = FenceGuardJdbc.builder(pool).withSchema(schema.name()).build();
        locks = clientOf(jdbc.lockBackend());
    }

    @AfterAll
    static void tearDown() {
        jdbc.close();
        pool.close();
        schema.close();
    }

    @Override
    LockClient locks() {
        return locks;
    }
}
