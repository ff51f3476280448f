package dev.fenceguard.jdbc;

import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The lock purge on PostgreSQL. */
class PostgresLockPurgeTest extends LockPurgeCases {

    private static PgTestSupport pg;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("lockpurge");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    @Override
    DataSource ds() {
        return pg.ds;
    }

    @Override
    String schema() {
        return pg.schema.name();
    }

    @Override
    void exec(String sql) throws Exception {
        pg.exec(sql);
    }

    @Override
    List<String> rows(String sql) {
        return pg.rows(sql);
    }

    @Override
    String keyText() {
        return "lock_key";
    }

    @Override
    long serverTick() {
        return Long.parseLong(pg.one("SELECT floor((extract(epoch from clock_timestamp()) * 1000000 - " + ClockFloor.EPOCH_MILLIS * 1000
                + ") / " + ClockFloor.MICROS_PER_FENCE + ")::bigint"));
    }

    @Override
    String clockPlusSeconds(int seconds) {
        return "clock_timestamp() + interval '" + seconds + " seconds'";
    }

    @Override
    boolean someoneWaitsForALock() {
        return !pg.rows("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' "
                + "AND query LIKE '%" + pg.schema.name() + "%'").isEmpty();
    }

    @Override
    boolean denseAcquisitionsHoldTheFloor() {
        return false;
    }

    @Override
    String storeName() {
        return "postgres";
    }

    @Override
    Class<?> backendType() {
        return PostgresLockBackend.class;
    }
}
