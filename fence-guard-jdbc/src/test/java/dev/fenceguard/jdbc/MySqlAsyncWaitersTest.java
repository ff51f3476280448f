package dev.fenceguard.jdbc;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.AsyncWaitersContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link AsyncWaitersContract} on {@link MySqlLockBackend} (the test MariaDB through MySQL Connector/J), with the
 * caller counts {@link MariaDbAsyncWaitersTest} uses: every poll is a JDBC round trip through 12 connections.
 */
class MySqlAsyncWaitersTest extends AsyncWaitersContract {

    private static MariaTestSupport server;
    private static LockBackend backend;

    @BeforeAll
    static void setUp() {
        server = new MariaTestSupport("my_waiters", "mysql", "");
        backend = server.mysqlBackend("locks").build();
    }

    @AfterAll
    static void tearDown() {
        server.close();
    }

    @Override
    protected LockBackend backend() {
        return backend;
    }

    @Override
    protected int waitersThatGiveUp() {
        return 1_000;
    }

    @Override
    protected int waitersThatGetIt() {
        return 300;
    }
}
