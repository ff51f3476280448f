package dev.fenceguard.jdbc.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.TableSettings;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.servers.TestMariaDb;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;

/**
 * A database of its own on the test MariaDB with a pool through one driver: {@code mariadb} (MariaDB
 * Connector/J) or {@code mysql} (MySQL Connector/J), with extra URL parameters (e.g.
 * {@code useAffectedRows=true} for changed-row counts).
 */
public final class MariaTestSupport implements AutoCloseable {
    public final TestMariaDb.Database db;
    public final HikariDataSource ds;

    public MariaTestSupport(String prefix) {
        this(prefix, "mariadb", "");
    }

    public MariaTestSupport(String prefix, String driver, String extra) {
        db = TestMariaDb.server().newDatabase(prefix);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(db.jdbcUrl(driver, extra));
        config.setMaximumPoolSize(12);
        config.setPoolName("fg-test-" + prefix + "-" + driver);
        ds = new HikariDataSource(config);
    }

    /** A migrated lock table {@code table} in this database, and the settings of a backend on it. */
    public TableSettings lockTable(String table) {
        FenceGuardMigrations.builder(ds).withSchema(db.name()).withTable(table).migrate();
        return TableSettings.of(ds).withSchema(db.name()).withTable(table);
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

    public String q(String table) {
        return db.name() + "." + table;
    }

    public List<String> rows(String sql) {
        return db.query(sql);
    }

    public String one(String sql) {
        List<String> r = rows(sql);
        return r.isEmpty() ? null : r.getFirst();
    }

    public void exec(String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    public DataSource dataSource() {
        return ds;
    }

    @Override
    public void close() {
        ds.close();
        db.close();
    }
}
