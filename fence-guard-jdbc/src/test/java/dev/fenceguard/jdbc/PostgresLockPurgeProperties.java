package dev.fenceguard.jdbc;

import dev.fenceguard.jdbc.testing.PgTestSupport;
import javax.sql.DataSource;
import net.jqwik.api.lifecycle.AfterContainer;

/** The lock purge's properties on PostgreSQL. */
class PostgresLockPurgeProperties extends LockPurgeProperties {

    private static final PgTestSupport PG = new PgTestSupport("purgeprops");

    @AfterContainer
    static void dropSchema() {
        PG.close();
    }

    @Override
    DataSource ds() {
        return PG.ds;
    }

    @Override
    String schema() {
        return PG.schema.name();
    }

    @Override
    void exec(String sql) throws Exception {
        PG.exec(sql);
    }

    @Override
    String aSecondAgo() {
        return "clock_timestamp() - interval '1 second'";
    }
}
