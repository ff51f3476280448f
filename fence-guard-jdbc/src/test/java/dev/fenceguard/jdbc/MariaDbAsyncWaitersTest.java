package dev.fenceguard.jdbc;

import dev.fenceguard.core.spi.LockBackend;

/** {@link LockTableAsyncWaiters} on {@link MariaDbLockBackend}. */
class MariaDbAsyncWaitersTest extends LockTableAsyncWaiters {

    @Override
    MariaTestSupport newServer() {
        return new MariaTestSupport("waiters");
    }

    @Override
    LockBackend backendOn(MariaTestSupport server) {
        return server.backend("locks").build();
    }
}
