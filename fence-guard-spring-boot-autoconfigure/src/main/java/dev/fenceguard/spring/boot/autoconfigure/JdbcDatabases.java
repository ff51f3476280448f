package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.MariaDbLockBackend;
import dev.fenceguard.jdbc.MySqlLockBackend;
import dev.fenceguard.jdbc.PostgresLockBackend;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * The one place that tells which database a {@link DataSource} is to and builds the lock backend for it.
 * (When fence-guard-jdbc gets one entry that does both, this class becomes a call to it.)
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
     * The lock backend for {@code database}; a setting its builder refuses fails with the property's name.
     *
     * @param strategy null for the backend's default
     */
    static LockBackend lockBackend(FenceGuardProperties.JdbcDatabase database, DataSource dataSource, String schema, String table,
            FenceStrategy strategy) {
        return switch (database) {
            case POSTGRESQL -> {
                PostgresLockBackend.Builder b = PostgresLockBackend.builder(dataSource);
                apply(schema, table, strategy, b::withSchema, b::withTable, b::withFenceStrategy);
                yield b.build();
            }
            case MARIADB -> {
                MariaDbLockBackend.Builder b = MariaDbLockBackend.builder(dataSource);
                apply(schema, table, strategy, b::withSchema, b::withTable, b::withFenceStrategy);
                yield b.build();
            }
            case MYSQL -> {
                MySqlLockBackend.Builder b = MySqlLockBackend.builder(dataSource);
                apply(schema, table, strategy, b::withSchema, b::withTable, b::withFenceStrategy);
                yield b.build();
            }
        };
    }

    private static void apply(String schema, String table, FenceStrategy strategy, Consumer<String> withSchema,
            Consumer<String> withTable, Consumer<FenceStrategy> withStrategy) {
        Settings.apply("jdbc.schema", schema, withSchema);
        Settings.apply("jdbc.table", table, withTable);
        Settings.apply("fence-strategy", strategy, withStrategy);
    }
}
