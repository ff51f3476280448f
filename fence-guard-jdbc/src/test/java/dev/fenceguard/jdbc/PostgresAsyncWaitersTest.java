package dev.fenceguard.jdbc;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.testkit.AsyncWaitersContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link AsyncWaitersContract} on PostgreSQL: JDBC blocks, so each call runs on a virtual thread (the
 * backend's default executor); a waiting caller holds none between its attempts, and the pool's 12
 * connections bound the calls in flight.
 */
class PostgresAsyncWaitersTest extends AsyncWaitersContract {

    private static PgTestSupport pg;
    private static LockBackend backend;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("waiters");
        backend = new PostgresLockBackend(pg.lockTable("locks"));
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    @Override
    protected LockBackend backend() {
        return backend;
    }

    /**
     * 1,000 rather than 10,000: every poll is a JDBC round trip through a pool of 12 connections, and
     * with both cores busy 10,000 pollers queued past the 10 s call timeout (TIMEOUT instead of giving
     * up at the 3 s deadline: 10 runs of 10). Redis runs the 10,000.
     */
    @Override
    protected int waitersThatGiveUp() {
        return 1_000;
    }

    /** 300 rather than 1,000: each handover here is a JDBC round trip per poll, and 1,000 took 41 s of CI time. */
    @Override
    protected int waitersThatGetIt() {
        return 300;
    }
}
