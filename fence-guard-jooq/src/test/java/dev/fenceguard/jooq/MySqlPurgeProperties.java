package dev.fenceguard.jooq;

import dev.fenceguard.jdbc.testing.MariaTestSupport;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * The testkit's purge template on the MariaDB test server through MySQL Connector/J with changed-row counts
 * ({@code useAffectedRows=true}: a write that leaves a row as it was counts 0, and the driver then hands out
 * no insert id). No MySQL server runs here; the statements are the ones MySQL gets.
 */
class MySqlPurgeProperties extends MariaDbPurgeTemplate {

    private static final MariaTestSupport MARIA = new MariaTestSupport("purgeprops_cj", "mysql", "useAffectedRows=true");
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
