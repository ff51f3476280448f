package dev.fenceguard.jdbc;

import dev.fenceguard.core.LockMetrics;
import javax.sql.DataSource;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * The fenced-resource template on FencedWriter update, upsert and tombstone delete over real MariaDB,
 * through MySQL Connector/J with its default found-row counts (the storm covers changed-row counts).
 */
class MariaDbFencedResourceProperties extends SqlResourceTemplate {

    private static final MariaTestSupport MARIA = new MariaTestSupport("sqlprops", "mysql", "");
    private static final FencedTable TABLE;

    static {
        try {
            MARIA.exec("CREATE TABLE " + MARIA.q("resources") + " (id VARCHAR(100) PRIMARY KEY, value TEXT, fence_token BIGINT, deleted BOOLEAN)");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        TABLE = FencedTable.builder(MARIA.db.name(), "resources", "id", "fence_token")
                .withTombstoneColumn("deleted").withMetrics(LockMetrics.none()).build();
    }

    @AfterContainer
    static void dropDatabase() {
        MARIA.close();
    }

    @Override
    FencedTable table() {
        return TABLE;
    }

    @Override
    DataSource ds() {
        return MARIA.ds;
    }

    @Override
    String resources() {
        return MARIA.q("resources");
    }

    @Override
    void exec(String sql) throws Exception {
        MARIA.exec(sql);
    }

    @Override
    String one(String sql) {
        return MARIA.one(sql);
    }
}
