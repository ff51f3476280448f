package dev.fenceguard.jdbc;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.testkit.LockBackendProperties;
import net.jqwik.api.lifecycle.AfterContainer;

/** Stateful chains on PostgreSQL against the reference model. */
class PostgresBackendProperties extends LockBackendProperties {

    private static final PgTestSupport PG = new PgTestSupport("props");
    private static final PostgresLockBackend BACKEND = new PostgresLockBackend(PG.lockTable("locks"));

    @AfterContainer
    static void dropSchema() {
        PG.close();
    }

    @Override
    protected LockBackend backend() {
        return BACKEND;
    }
}
