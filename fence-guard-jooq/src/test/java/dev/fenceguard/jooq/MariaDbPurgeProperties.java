package dev.fenceguard.jooq;

import dev.fenceguard.jdbc.testing.MariaTestSupport;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * The testkit's purge template ({@link dev.fenceguard.testkit.FencePurgeProperties}) on MariaDB through MariaDB
 * Connector/J with found-row counts; {@link MySqlPurgeProperties} runs it through MySQL Connector/J with
 * changed-row counts.
 */
class MariaDbPurgeProperties extends MariaDbPurgeTemplate {

    private static final MariaTestSupport MARIA = new MariaTestSupport("purgeprops");
    private static final FencedTable ITEMS = itemsTable(MARIA);

    @AfterContainer
    static void dropDatabase() {
        MARIA.close();
    }

    @Override
    MariaTestSupport maria() {
        return MARIA;
    }

    @Override
    FencedTable items() {
        return ITEMS;
    }
}
