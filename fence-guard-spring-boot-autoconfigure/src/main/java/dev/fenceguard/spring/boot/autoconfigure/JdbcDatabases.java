package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * Which database a {@link DataSource} is to, as far as the auto-configuration needs it before any lock is
 * taken: the lock table's schema and quoting, and the migration to run. The lock backend itself comes
 * from fence-guard-jdbc's entry, {@link FenceGuardJdbc}, which learns the database on its own.
 */
final class JdbcDatabases {
    private JdbcDatabases() {}

    /** A database fence-guard has a lock backend for, and the schema its lock table is in unless one is set. */
    record Detected(FenceGuardProperties.JdbcDatabase database, String defaultSchema) {
        /** {@code fence-guard.jdbc.schema}, or else the database's default. */
        String schema(FenceGuardProperties.Jdbc settings) {
            return settings.getSchema() != null ? settings.getSchema() : defaultSchema;
        }
    }

    /**
     * The database of {@code dataSource} as {@code fence-guard.jdbc.*} sets it, asking a connection only
     * for what they leave open.
     *
     * @throws IllegalStateException as {@link #detect}
     */
    static Detected resolve(DataSource dataSource, FenceGuardProperties.Jdbc settings) {
        return settings.getDatabase() != null && settings.getSchema() != null
                ? new Detected(settings.getDatabase(), settings.getSchema())
                : detect(dataSource, settings.getDatabase());
    }

    /**
     * Asks one connection of {@code dataSource} which database it is to, by the product name and version
     * its driver reports (MySQL Connector/J calls MariaDB "MySQL" and says "MariaDB" in the version), and,
     * on MariaDB and MySQL, which database (schema) it is in.
     *
     * @param known the database when {@code fence-guard.jdbc.database} sets it, else null
     * @throws IllegalStateException if the database is one fence-guard has no lock backend for, naming it,
     *     or if no connection could be had
     */
    static Detected detect(DataSource dataSource, FenceGuardProperties.JdbcDatabase known) {
        if (known == FenceGuardProperties.JdbcDatabase.POSTGRESQL) {
            return new Detected(known, FenceGuardProperties.DEFAULT_POSTGRESQL_SCHEMA); // nothing to ask
        }
        try (Connection c = dataSource.getConnection()) {
            FenceGuardProperties.JdbcDatabase database = known != null ? known : classify(c.getMetaData());
            return new Detected(database, database == FenceGuardProperties.JdbcDatabase.POSTGRESQL
                    ? FenceGuardProperties.DEFAULT_POSTGRESQL_SCHEMA : currentDatabase(c));
        } catch (SQLException e) {
            throw new IllegalStateException("fence-guard could not open a connection of the DataSource bean to tell which database it"
                    + " is (SQLSTATE " + e.getSQLState() + "); set fence-guard.jdbc.database (and, on MariaDB or MySQL,"
                    + " fence-guard.jdbc.schema) to start without asking", e);
        }
    }

    private static FenceGuardProperties.JdbcDatabase classify(DatabaseMetaData metaData) throws SQLException {
        String product = String.valueOf(metaData.getDatabaseProductName());
        String version = String.valueOf(metaData.getDatabaseProductVersion());
        String p = product.toLowerCase(Locale.ROOT);
        if (p.contains("postgres")) {
            return FenceGuardProperties.JdbcDatabase.POSTGRESQL;
        }
        if (p.contains("mariadb") || (p.contains("mysql") && version.toLowerCase(Locale.ROOT).contains("mariadb"))) {
            return FenceGuardProperties.JdbcDatabase.MARIADB;
        }
        if (p.contains("mysql")) {
            return FenceGuardProperties.JdbcDatabase.MYSQL;
        }
        throw new IllegalStateException("fence-guard has no lock backend for the database of the DataSource bean, " + product + " "
                + version + ": it supports PostgreSQL, MariaDB and MySQL. Declare a LockBackend bean of your own, or set"
                + " fence-guard.backend to another store the application has (redis or firestore)");
    }

    private static String currentDatabase(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT DATABASE()")) {
            String name = rs.next() ? rs.getString(1) : null;
            if (name == null) {
                throw new IllegalStateException("the DataSource bean's connections are in no database (its JDBC URL names none), so"
                        + " fence-guard cannot tell where its lock table is: set fence-guard.jdbc.schema");
            }
            return name;
        }
    }

    /**
     * fence-guard-jdbc's entry on the lock table, not built yet: its {@code build()} learns the database
     * from one connection. A setting the builder refuses fails here, with the property's name.
     *
     * @param strategy null for the entry's default
     */
    static FenceGuardJdbc.Builder entry(DataSource dataSource, String schema, String table, FenceStrategy strategy) {
        FenceGuardJdbc.Builder b = FenceGuardJdbc.builder(dataSource);
        Settings.apply("jdbc.schema", schema, b::withSchema);
        Settings.apply("jdbc.table", table, b::withLockTable);
        Settings.apply("fence-strategy", strategy, b::withFenceStrategy);
        return b;
    }

    /** The {@code LockBackend.name()} of fence-guard-jdbc's lock backend on {@code database}. */
    static String backendName(FenceGuardProperties.JdbcDatabase database) {
        return switch (database) {
            case POSTGRESQL -> "postgres";
            case MARIADB -> "mariadb";
            case MYSQL -> "mysql";
        };
    }
}
