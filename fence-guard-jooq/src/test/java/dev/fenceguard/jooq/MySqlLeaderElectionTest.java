package dev.fenceguard.jooq;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.MariaTestSupport;

/** {@link LockTableLeaderElection} on {@code MySqlLockBackend} (the test MariaDB through MySQL Connector/J). */
class MySqlLeaderElectionTest extends LockTableLeaderElection {

    @Override
    MariaTestSupport newServer() {
        return new MariaTestSupport("my_election", "mysql", "");
    }

    @Override
    LockBackend backendOn(MariaTestSupport server) {
        return server.mySqlBackend("locks");
    }
}
