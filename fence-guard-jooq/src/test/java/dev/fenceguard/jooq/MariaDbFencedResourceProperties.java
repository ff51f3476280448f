package dev.fenceguard.jooq;

import dev.fenceguard.jdbc.testing.MariaTestSupport;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * The fenced-resource template on FencedWriter update, upsert and tombstone delete over real MariaDB,
 * through MySQL Connector/J with its default found-row counts ({@link MariaDbChangedRowsFencedResourceProperties}
 * runs it with changed-row counts).
 */
class MariaDbFencedResourceProperties extends MariaDbResourceTemplate {

    private static final MariaTestSupport MARIA = new MariaTestSupport("sqlprops", "mysql", "");
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
