package dev.fenceguard.jdbc;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.MariaTestSupport;

/** {@link LockTableAsyncWaiters} on {@link MySqlLockBackend} (the test MariaDB through MySQL Connector/J). */
class MySqlAsyncWaitersTest extends LockTableAsyncWaiters {

    @Override
    MariaTestSupport newServer() {
        return new MariaTestSupport("my_waiters", "mysql", "");
    }

    @Override
    LockBackend backendOn(MariaTestSupport server) {
        return new MySqlLockBackend(server.lockTable("locks"));
    }
}
