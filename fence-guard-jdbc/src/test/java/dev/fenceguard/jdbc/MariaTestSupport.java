package dev.fenceguard.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
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
final class MariaTestSupport implements AutoCloseable {
    final TestMariaDb.Database db;
    final HikariDataSource ds;

    MariaTestSupport(String prefix) {
        this(prefix, "mariadb", "");
    }

    MariaTestSupport(String prefix, String driver, String extra) {
        db = TestMariaDb.server().newDatabase(prefix);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(db.jdbcUrl(driver, extra));
        config.setMaximumPoolSize(12);
        config.setPoolName("fg-test-" + prefix + "-" + driver);
        ds = new HikariDataSource(config);
    }

    MariaDbLockBackend.Builder backend(String table) {
        FenceGuardMigrations.builder(ds).withSchema(db.name()).withTable(table).migrate();
        return MariaDbLockBackend.builder(ds).withSchema(db.name()).withTable(table);
    }

    MySqlLockBackend.Builder mysqlBackend(String table) {
        FenceGuardMigrations.builder(ds).withSchema(db.name()).withTable(table).migrate();
        return MySqlLockBackend.builder(ds).withSchema(db.name()).withTable(table);
    }

    String q(String table) {
        return db.name() + "." + table;
    }

    List<String> rows(String sql) {
        return db.query(sql);
    }

    String one(String sql) {
        List<String> r = rows(sql);
        return r.isEmpty() ? null : r.getFirst();
    }

    void exec(String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    DataSource dataSource() {
        return ds;
    }

    @Override
    public void close() {
        ds.close();
        db.close();
    }
}
