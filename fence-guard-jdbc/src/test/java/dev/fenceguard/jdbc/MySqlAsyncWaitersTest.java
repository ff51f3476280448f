package dev.fenceguard.jdbc;

import dev.fenceguard.core.spi.LockBackend;

/** {@link LockTableAsyncWaiters} on {@link MySqlLockBackend} (the test MariaDB through MySQL Connector/J). */
class MySqlAsyncWaitersTest extends LockTableAsyncWaiters {

    @Override
    MariaTestSupport newServer() {
        return new MariaTestSupport("my_waiters", "mysql", "");
    }

    @Override
    LockBackend backendOn(MariaTestSupport server) {
        return server.mysqlBackend("locks").build();
    }
}
