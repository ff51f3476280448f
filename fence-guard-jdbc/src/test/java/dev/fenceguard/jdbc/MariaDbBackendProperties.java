package dev.fenceguard.jdbc;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import dev.fenceguard.testkit.LockBackendProperties;
import net.jqwik.api.lifecycle.AfterContainer;

/** Stateful chains on MariaDB against the reference model. */
class MariaDbBackendProperties extends LockBackendProperties {

    private static final MariaTestSupport MARIA = new MariaTestSupport("props");
    private static final MariaDbLockBackend BACKEND = new MariaDbLockBackend(MARIA.lockTable("locks"));

    @AfterContainer
    static void dropDatabase() {
        MARIA.close();
    }

    @Override
    protected LockBackend backend() {
        return BACKEND;
    }
}
