package dev.fenceguard.jdbc;

import dev.fenceguard.core.spi.LockBackend;

/** {@link LockTableLeaderElection} on {@link MariaDbLockBackend}. */
class MariaDbLeaderElectionTest extends LockTableLeaderElection {

    @Override
    MariaTestSupport newServer() {
        return new MariaTestSupport("election");
    }

    @Override
    LockBackend backendOn(MariaTestSupport server) {
        return server.backend("locks").build();
    }
}
