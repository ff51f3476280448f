package dev.fenceguard.jdbc;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.AsyncWaitersContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link AsyncWaitersContract} on MariaDB: each call runs on a virtual thread (the backend's default
 * executor), a waiting caller holds none between its attempts, and the pool's 12 connections bound the
 * calls in flight.
 */
class MariaDbAsyncWaitersTest extends AsyncWaitersContract {

    private static MariaTestSupport maria;
    private static LockBackend backend;

    @BeforeAll
    static void setUp() {
        maria = new MariaTestSupport("waiters");
        backend = maria.backend("locks").build();
    }

    @AfterAll
    static void tearDown() {
        maria.close();
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
