package dev.fenceguard.jdbc;

import dev.fenceguard.core.spi.LockBackend;

/** {@link LockTableLeaderElection} on {@link MySqlLockBackend} (the test MariaDB through MySQL Connector/J). */
class MySqlLeaderElectionTest extends LockTableLeaderElection {

    @Override
    MariaTestSupport newServer() {
        return new MariaTestSupport("my_election", "mysql", "");
    }

    @Override
    LockBackend backendOn(MariaTestSupport server) {
        return server.mysqlBackend("locks").build();
    }
}
