package dev.fenceguard.jooq;

import dev.fenceguard.jdbc.internal.MySqlErrors;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import dev.fenceguard.migrations.FenceColumn;
import dev.fenceguard.migrations.TombstoneIndex;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The zombie storm with a purge running beside it ({@link PurgeStorm}) on the test MariaDB through MariaDB
 * Connector/J, in a database of its own: the lock backend {@code FenceGuardJdbc} picks for the server, and
 * the counter's table with the tombstone index docs/mysql-mariadb.md recommends ({@code (tombstone, key,
 * fence)}, from {@link TombstoneIndex#mysqlStatements()}). Size: 300 attempts, or
 * {@code -Dfenceguard.storm.attempts=N} for a soak.
 */
class MariaDbPurgeStormTest {

    private static final MariaTestSupport MARIA = new MariaTestSupport("purgestorm");

    @AfterAll
    static void dropDatabase() {
        MARIA.close();
    }

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLostWhilePurgesRemoveTombstones() throws Exception {
        String database = MARIA.db.name();
        PurgeStorm.run(new PurgeStorm.Database("mariadb", "mysql", MARIA, database,
                table -> TombstoneIndex.on(FenceColumn.on(database, table).withTombstoneColumn("fence_deleted"), "id").mysqlStatements(),
                MySqlErrors::map, ago -> MariaHorizonFixture.tickAgo(MARIA, ago)));
    }
}
