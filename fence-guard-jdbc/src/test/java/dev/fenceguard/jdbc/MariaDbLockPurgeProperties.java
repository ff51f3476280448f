package dev.fenceguard.jdbc;

import dev.fenceguard.jdbc.testing.MariaTestSupport;
import javax.sql.DataSource;
import net.jqwik.api.lifecycle.AfterContainer;

/** The lock purge's properties on MariaDB. */
class MariaDbLockPurgeProperties extends LockPurgeProperties {

    private static final MariaTestSupport MARIA = new MariaTestSupport("purgeprops");

    @AfterContainer
    static void dropDatabase() {
        MARIA.close();
    }

    @Override
    DataSource ds() {
        return MARIA.ds;
    }

    @Override
    String schema() {
        return MARIA.db.name();
    }

    @Override
    void exec(String sql) throws Exception {
        MARIA.exec(sql);
    }

    @Override
    String aSecondAgo() {
        return "UTC_TIMESTAMP(6) - INTERVAL 1 SECOND";
    }
}
