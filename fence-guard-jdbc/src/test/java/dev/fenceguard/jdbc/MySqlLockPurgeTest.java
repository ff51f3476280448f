package dev.fenceguard.jdbc;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.TableSettings;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * The lock purge of the MySQL backend, on the MariaDB test server through MySQL Connector/J (no MySQL server
 * runs here; the backend uses only syntax both accept). A MariaDB server hands out the MariaDB backend, so
 * the purge is run on the MySQL backend directly, as {@link FenceGuardJdbc#purgeLocks} runs it.
 */
class MySqlLockPurgeTest extends MariaDbLockPurgeTest {

    @Override
    MariaTestSupport open() {
        return new MariaTestSupport("my_lockpurge", "mysql", "");
    }

    @Override
    Locks entry(DataSource ds, String table, FenceStrategy strategy, Duration margin) {
        MySqlLockBackend backend = new MySqlLockBackend(TableSettings.of(ds).withSchema(schema()).withTable(table).withFenceStrategy(strategy));
        return new Locks() {
            @Override
            public LockBackend lockBackend() {
                return backend;
            }

            @Override
            public PurgeResult purgeLocks(Purge purge) {
                return FenceGuardJdbc.purge(backend, purge, margin, metrics);
            }
        };
    }

    @Override
    String storeName() {
        return "mysql";
    }

    @Override
    Class<?> backendType() {
        return MySqlLockBackend.class;
    }
}
