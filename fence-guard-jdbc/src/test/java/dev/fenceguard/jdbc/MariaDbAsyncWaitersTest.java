package dev.fenceguard.jdbc;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.MariaTestSupport;

/** {@link LockTableAsyncWaiters} on {@link MariaDbLockBackend}. */
class MariaDbAsyncWaitersTest extends LockTableAsyncWaiters {

    @Override
    MariaTestSupport newServer() {
        return new MariaTestSupport("waiters");
    }

    @Override
    LockBackend backendOn(MariaTestSupport server) {
        return new MariaDbLockBackend(server.lockTable("locks"));
    }
}
