package dev.fenceguard.jooq;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.MariaTestSupport;

/** {@link LockTableLeaderElection} on {@code MariaDbLockBackend}. */
class MariaDbLeaderElectionTest extends LockTableLeaderElection {

    @Override
    MariaTestSupport newServer() {
        return new MariaTestSupport("election");
    }

    @Override
    LockBackend backendOn(MariaTestSupport server) {
        return server.mariaDbBackend("locks");
    }
}
