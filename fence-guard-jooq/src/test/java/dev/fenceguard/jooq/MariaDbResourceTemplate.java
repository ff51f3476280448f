package dev.fenceguard.jooq;

import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import javax.sql.DataSource;

/** The fenced-resource template over a MariaDB database of a subclass's own, whose driver URL options it picks. */
abstract class MariaDbResourceTemplate extends SqlResourceTemplate {

    /** The subclass's database (a static fixture of the subclass, closed in its {@code @AfterContainer}). */
    abstract MariaTestSupport maria();

    /** Creates the resources table in {@code maria}'s database; the fenced table over it. */
    static FencedTable resourcesTable(MariaTestSupport maria) {
        try {
            maria.exec("CREATE TABLE " + maria.q("resources") + " (id VARCHAR(100) PRIMARY KEY, value TEXT, fence_token BIGINT, deleted BOOLEAN)");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return FencedTable.builder(maria.db.name(), "resources", "id", "fence_token")
                .withTombstoneColumn("deleted").withMetrics(LockMetrics.none()).build();
    }

    @Override
    DataSource ds() {
        return maria().ds;
    }

    @Override
    String resources() {
        return maria().q("resources");
    }

    @Override
    void exec(String sql) throws Exception {
        maria().exec(sql);
    }

    @Override
    String one(String sql) {
        return maria().one(sql);
    }
}
