package dev.fenceguard.examples.jdbconly;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Takes, refuses and takes again a lock through {@link FenceGuardJdbc} on the database of a JDBC URL (the
 * first argument), on a module path with fence-guard-jdbc, its dependencies and that database's driver only.
 * Works in a schema (database) of its own, dropped at the end. Prints which modules it found and exits 1
 * if an answer is not as expected.
 */
public final class JdbcOnlyLocks {

    private JdbcOnlyLocks() {}

    public static void main(String[] args) throws Exception {
        DataSource ds = new UrlDataSource(args[0]);
        String schema = "fg_jdbconly_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        boolean postgres;
        try (Connection c = ds.getConnection()) {
            postgres = c.getMetaData().getDatabaseProductName().toLowerCase(java.util.Locale.ROOT).contains("postgres");
        }
        sql(ds, (postgres ? "CREATE SCHEMA " : "CREATE DATABASE ") + schema);
        boolean ok;
        try {
            sql(ds, postgres
                    ? "CREATE TABLE " + schema + ".fence_guard_locks (lock_key TEXT NOT NULL PRIMARY KEY, fence BIGINT NOT NULL, "
                            + "lock_id TEXT NULL, expires_at TIMESTAMPTZ NULL, acquired_at TIMESTAMPTZ NULL)"
                    : "CREATE TABLE " + schema + ".fence_guard_locks (lock_key VARBINARY(512) NOT NULL PRIMARY KEY, fence BIGINT NOT NULL, "
                            + "lock_id CHAR(22) CHARACTER SET ascii COLLATE ascii_bin NULL, expires_at DATETIME(6) NULL, "
                            + "acquired_at DATETIME(6) NULL) ENGINE=InnoDB");
            // The lock table's second migration (V2): the floor new DENSE rows start above after a purge of lock rows.
            sql(ds, postgres
                    ? "CREATE TABLE " + schema + ".fence_guard_lock_floors (lock_table TEXT NOT NULL PRIMARY KEY, fence_floor BIGINT NOT NULL)"
                    : "CREATE TABLE " + schema + ".fence_guard_lock_floors (lock_table VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin "
                            + "NOT NULL PRIMARY KEY, fence_floor BIGINT NOT NULL) ENGINE=InnoDB");
            sql(ds, "INSERT INTO " + schema + ".fence_guard_lock_floors (lock_table, fence_floor) VALUES ('fence_guard_locks', 0)");
            ok = takesAndRefuses(ds, schema);
        } finally {
            sql(ds, (postgres ? "DROP SCHEMA " + schema + " CASCADE" : "DROP DATABASE " + schema));
        }
        for (String module : new String[] {"org.jooq", "org.postgresql.jdbc", "org.mariadb.jdbc"}) {
            System.out.println("module " + module + ": " + (ModuleLayer.boot().findModule(module).isPresent() ? "present" : "absent"));
        }
        System.out.println(ok ? "OK on the module path: " + JdbcOnlyLocks.class.getModule().getName() : "FAILED");
        System.exit(ok ? 0 : 1);
    }

    private static boolean takesAndRefuses(DataSource ds, String schema) {
        FenceGuardJdbc jdbc = FenceGuardJdbc.builder(ds).withSchema(schema).build();
        LockClient locks = LockClient.builder(jdbc.lockBackend()).withMetrics(LockMetrics.none()).build();
        long first;
        boolean refused;
        try (Lease lease = locks.tryAcquire("orders:42", Duration.ofSeconds(30)).orElseThrow()) {
            first = lease.fence().value();
            refused = locks.tryAcquire("orders:42", Duration.ofSeconds(30)).isEmpty();
        }
        long second;
        try (Lease again = locks.tryAcquire("orders:42", Duration.ofSeconds(30)).orElseThrow()) {
            second = again.fence().value();
        }
        System.out.println(jdbc.lockBackend().name() + ": fences " + first + " then " + second + ", held in between: " + refused);
        return refused && second > first;
    }

    private static void sql(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    /** Connections from {@link DriverManager}, which finds the driver on the module path by its service declaration. */
    private record UrlDataSource(String url) implements DataSource {
        @Override
        public Connection getConnection() throws SQLException {
            return DriverManager.getConnection(url);
        }

        @Override
        public Connection getConnection(String user, String password) throws SQLException {
            return DriverManager.getConnection(url, user, password);
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {}

        @Override
        public void setLoginTimeout(int seconds) {}

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() {
            return Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> type) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> type) {
            return false;
        }
    }
}
