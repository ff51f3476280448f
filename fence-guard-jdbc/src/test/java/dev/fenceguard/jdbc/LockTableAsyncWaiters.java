package dev.fenceguard.jdbc;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import dev.fenceguard.testkit.AsyncWaitersContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link AsyncWaitersContract} on a backend of the MySQL/MariaDB lock table, in a database of its own: each call
 * runs on a virtual thread (the backends' default executor), a waiting caller holds none between its attempts,
 * and the pool's 12 connections bound the calls in flight.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LockTableAsyncWaiters extends AsyncWaitersContract {

    private MariaTestSupport server;
    private LockBackend backend;

    /** A database of its own, through the driver under test. */
    abstract MariaTestSupport newServer();

    /** The backend under test on a migrated table {@code locks} of {@code server}. */
    abstract LockBackend backendOn(MariaTestSupport server);

    @BeforeAll
    void setUp() {
        server = newServer();
        backend = backendOn(server);
    }

    @AfterAll
    void tearDown() {
        server.close();
    }

    @Override
    protected LockBackend backend() {
        return backend;
    }

    /** 1,000 rather than 10,000, as on PostgreSQL: every poll is a JDBC round trip through 12 connections. */
    @Override
    protected int waitersThatGiveUp() {
        return 1_000;
    }

    /** 300 rather than 1,000, as on PostgreSQL: each handover is a JDBC round trip per poll. */
    @Override
    protected int waitersThatGetIt() {
        return 300;
    }
}
