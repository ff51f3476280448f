package dev.fenceguard.jdbc;

import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** The lock purge on MariaDB (MariaDB Connector/J). */
class MariaDbLockPurgeTest extends LockPurgeCases {

    MariaTestSupport maria;

    MariaTestSupport open() {
        return new MariaTestSupport("lockpurge");
    }

    @BeforeEach
    void setUp() {
        maria = open();
    }

    @AfterEach
    void tearDown() {
        maria.close();
    }

    @Override
    DataSource ds() {
        return maria.ds;
    }

    @Override
    String schema() {
        return maria.db.name();
    }

    @Override
    void exec(String sql) throws Exception {
        maria.exec(sql);
    }

    @Override
    List<String> rows(String sql) {
        return maria.rows(sql);
    }

    @Override
    String keyText() {
        return "CAST(lock_key AS CHAR)";
    }

    @Override
    long serverTick() {
        return Long.parseLong(maria.one("SELECT (TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', UTC_TIMESTAMP(6)) - "
                + ClockFloor.EPOCH_MILLIS * 1000 + ") DIV " + ClockFloor.MICROS_PER_FENCE));
    }

    @Override
    String clockPlusSeconds(int seconds) {
        return "UTC_TIMESTAMP(6) + INTERVAL " + seconds + " SECOND";
    }

    @Override
    boolean someoneWaitsForALock() {
        // The server is shared: only statements on this test's own database count. A statement of ours still in the
        // server while the other transaction sits at its held commit is one waiting for that transaction's locks.
        return !maria.rows("SELECT 1 FROM information_schema.processlist WHERE command IN ('Query', 'Execute') AND info LIKE '%"
                + maria.db.name() + "%' AND info NOT LIKE '%information_schema%'").isEmpty();
    }

    @Override
    boolean denseAcquisitionsHoldTheFloor() {
        return true;
    }

    @Override
    String storeName() {
        return "mariadb";
    }

    @Override
    Class<?> backendType() {
        return MariaDbLockBackend.class;
    }
}
