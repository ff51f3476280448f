package dev.fenceguard.jooq;

import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import javax.sql.DataSource;
import net.jqwik.api.lifecycle.AfterContainer;

/** The fenced-resource template on FencedWriter update, upsert and tombstone delete over real PostgreSQL. */
class SqlFencedResourceProperties extends SqlResourceTemplate {

    private static final PgTestSupport PG = new PgTestSupport("sqlprops");
    private static final FencedTable TABLE;

    static {
        try {
            PG.exec("CREATE TABLE " + PG.q("resources") + " (id TEXT PRIMARY KEY, value TEXT, fence_token BIGINT, deleted BOOLEAN)");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        TABLE = FencedTable.builder(PG.schema.name(), "resources", "id", "fence_token")
                .withTombstoneColumn("deleted").withMetrics(LockMetrics.none()).build();
    }

    @AfterContainer
    static void dropSchema() {
        PG.close();
    }

    @Override
    FencedTable table() {
        return TABLE;
    }

    @Override
    DataSource ds() {
        return PG.ds;
    }

    @Override
    String resources() {
        return PG.q("resources");
    }

    @Override
    void exec(String sql) throws Exception {
        PG.exec(sql);
    }

    @Override
    String one(String sql) {
        return PG.one(sql);
    }
}
