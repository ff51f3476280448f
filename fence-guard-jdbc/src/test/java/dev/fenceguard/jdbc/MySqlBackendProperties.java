package dev.fenceguard.jdbc;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import dev.fenceguard.testkit.LockBackendProperties;
import net.jqwik.api.lifecycle.AfterContainer;

/** Stateful chains on {@link MySqlLockBackend} (the test MariaDB through MySQL Connector/J) against the reference model. */
class MySqlBackendProperties extends LockBackendProperties {

    private static final MariaTestSupport SERVER = new MariaTestSupport("my_props", "mysql", "");
    private static final MySqlLockBackend BACKEND = new MySqlLockBackend(SERVER.lockTable("locks"));

    @AfterContainer
    static void dropDatabase() {
        SERVER.close();
    }

    @Override
    protected LockBackend backend() {
        return BACKEND;
    }
}
