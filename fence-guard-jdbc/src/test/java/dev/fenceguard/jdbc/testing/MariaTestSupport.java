package dev.fenceguard.jdbc.testing;

import com.zaxxer.hikari.HikariConfig;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.servers.TestMariaDb;

/**
 * A database of its own on the test MariaDB with a pool through one driver: {@code mariadb} (MariaDB
 * Connector/J) or {@code mysql} (MySQL Connector/J), with extra URL parameters (e.g.
 * {@code useAffectedRows=true} for changed-row counts).
 */
public final class MariaTestSupport extends SqlTestSupport {
    public final TestMariaDb.Database db;

    public MariaTestSupport(String prefix) {
        this(prefix, "mariadb", "");
    }

    public MariaTestSupport(String prefix, String driver, String extra) {
        this(TestMariaDb.server().newDatabase(prefix), "fg-test-" + prefix + "-" + driver, driver, extra);
    }

    private MariaTestSupport(TestMariaDb.Database db, String poolName, String driver, String extra) {
        super(withUrl(pool(poolName), db.jdbcUrl(driver, extra)), db.name(), db::query, db::close);
        this.db = db;
    }

    private static HikariConfig withUrl(HikariConfig config, String url) {
        config.setJdbcUrl(url);
        return config;
    }

    /** A migrated lock table {@code table} in this database, and the MariaDB lock backend on it. */
    public LockBackend mariaDbBackend(String table) {
        lockTable(table);
        return LockBackends.mariaDb(ds, db.name(), table);
    }

    /** A migrated lock table {@code table} in this database, and the MySQL lock backend on it. */
    public LockBackend mySqlBackend(String table) {
        lockTable(table);
        return LockBackends.mySql(ds, db.name(), table);
    }
}
