package dev.fenceguard.jooq;

import dev.fenceguard.jdbc.testing.MariaTestSupport;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * The fenced-resource template on FencedWriter update, upsert and tombstone delete over real MariaDB,
 * through MySQL Connector/J with changed-row counts ({@code useAffectedRows=true}): an update or upsert that
 * leaves the row as it was counts 0, and the driver then hands out no insert id.
 */
class MariaDbChangedRowsFencedResourceProperties extends MariaDbResourceTemplate {

    private static final MariaTestSupport MARIA = new MariaTestSupport("sqlprops_chg", "mysql", "useAffectedRows=true");
    private static final FencedTable TABLE = resourcesTable(MARIA);

    @AfterContainer
    static void dropDatabase() {
        MARIA.close();
    }

    @Override
    MariaTestSupport maria() {
        return MARIA;
    }

    @Override
    FencedTable table() {
        return TABLE;
    }
}
