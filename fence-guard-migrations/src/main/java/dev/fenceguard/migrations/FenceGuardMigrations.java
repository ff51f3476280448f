package dev.fenceguard.migrations;

import dev.fenceguard.core.internal.SqlIdentifiers;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/**
 * Creates or upgrades fence-guard's lock table on PostgreSQL, or on MySQL/MariaDB (its own location,
 * {@link #MYSQL_LOCATION}; there a schema is a database), with Flyway; and, on PostgreSQL, the tables of
 * the idempotency store ({@link #idempotencyBuilder}) and of singleflight ({@link #singleflightBuilder}).
 *
 * <p>Two ways to use it:
 * <ul>
 *   <li>On its own: {@code FenceGuardMigrations.migrate(dataSource)} (table {@code public.fence_guard_locks}),
 *       or {@code FenceGuardMigrations.builder(dataSource).withSchema("locks").withTable("app_locks").migrate()}.
 *       Its Flyway history is kept in a table of its own ({@link #historyTable(String)}), beside yours.</li>
 *   <li>From your own Flyway: add {@link #LOCATION} to its locations and {@link #placeholders(String, String)}
 *       to its placeholders. The lock table's migrations then run in your version sequence; fence-guard's
 *       versions start at 1, so prefer the first way when your own versions overlap.</li>
 * </ul>
 *
 * <p>The table layout is documented in {@code docs/postgresql.md} and is covered by a test that fails
 * if it changes, because your data outlives our releases.
 *
 * @since 0.1
 */
public final class FenceGuardMigrations {

    /** Where the lock-table migrations live on the class path. */
    public static final String LOCATION = "classpath:db/fence-guard/postgresql";
    /**
     * Where the idempotency-table migrations live on the class path (same placeholders).
     *
     * @since 0.1
     */
    public static final String IDEMPOTENCY_LOCATION = "classpath:db/fence-guard/postgresql-idempotency";
    /**
     * Default name of the idempotency table.
     *
     * @since 0.1
     */
    public static final String DEFAULT_IDEMPOTENCY_TABLE = "fence_guard_idempotency";
    /**
     * Where the singleflight-table migrations live on the class path (same placeholders).
     *
     * @since 0.1
     */
    public static final String SINGLEFLIGHT_LOCATION = "classpath:db/fence-guard/postgresql-singleflight";
    /**
     * Default name of the singleflight table.
     *
     * @since 0.1
     */
    public static final String DEFAULT_SINGLEFLIGHT_TABLE = "fence_guard_flights";
    /**
     * Where the MySQL/MariaDB lock-table migrations live on the class path (used by {@link Builder#migrate()}
     * when the data source is MySQL or MariaDB; give your own Flyway {@code flyway-mysql}).
     *
     * @since 0.1
     */
    public static final String MYSQL_LOCATION = "classpath:db/fence-guard/mysql";
    /** Default schema of the lock table. */
    public static final String DEFAULT_SCHEMA = "public";
    /** Default name of the lock table. */
    public static final String DEFAULT_TABLE = "fence_guard_locks";
    /** Placeholder naming the schema in the migrations. */
    public static final String SCHEMA_PLACEHOLDER = "fenceGuardSchema";
    /** Placeholder naming the table in the migrations. */
    public static final String TABLE_PLACEHOLDER = "fenceGuardTable";

    private FenceGuardMigrations() {}

    /**
     * Migrates {@code public.fence_guard_locks} to the latest version.
     *
     * @return how many migrations ran (0 when up to date)
     */
    public static int migrate(DataSource dataSource) {
        return builder(dataSource).migrate();
    }

    /** Options for another schema or table name. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource, LOCATION, MYSQL_LOCATION, DEFAULT_TABLE, FenceGuardMigrations::historyTable);
    }

    /**
     * Options for the idempotency table of {@code FenceGuardJdbc.idempotencyBackend()} (fence-guard-jdbc)
     * (default {@code public.fence_guard_idempotency}), with a Flyway history of its own like a lock table's.
     *
     * @since 0.1
     */
    public static Builder idempotencyBuilder(DataSource dataSource) {
        return new Builder(dataSource, IDEMPOTENCY_LOCATION, null, DEFAULT_IDEMPOTENCY_TABLE, FenceGuardMigrations::historyTable);
    }

    /**
     * Options for the singleflight table of {@code FenceGuardJdbc.flightStore()} (fence-guard-jdbc) (default
     * {@code public.fence_guard_flights}), with a Flyway history of its own,
     * {@link #singleflightHistoryTable(String)}. PostgreSQL only.
     *
     * @since 0.1
     */
    public static Builder singleflightBuilder(DataSource dataSource) {
        return new Builder(dataSource, SINGLEFLIGHT_LOCATION, null, DEFAULT_SINGLEFLIGHT_TABLE,
                FenceGuardMigrations::singleflightHistoryTable);
    }

    /**
     * The placeholders to give your own Flyway when you add {@link #LOCATION} to it.
     *
     * @throws IllegalArgumentException if a name is not a plain SQL identifier
     */
    public static Map<String, String> placeholders(String schema, String table) {
        return Map.of(SCHEMA_PLACEHOLDER, SqlIdentifiers.require("schema", schema),
                TABLE_PLACEHOLDER, SqlIdentifiers.require("table", table));
    }

    /**
     * The Flyway history table used by {@link Builder#migrate()} for lock table {@code table}: one per
     * lock table, so several lock tables can live in one schema.
     */
    public static String historyTable(String table) {
        String name = "fence_guard_history_" + SqlIdentifiers.require("table", table);
        return name.length() <= SqlIdentifiers.MAX_LENGTH ? name
                : "fgh_" + Integer.toHexString(table.hashCode()) + "_" + table.substring(0, 40);
    }

    /**
     * The Flyway history table used by {@link #singleflightBuilder} for singleflight table {@code table}.
     *
     * @since 0.1
     */
    public static String singleflightHistoryTable(String table) {
        String name = "fence_guard_sf_history_" + SqlIdentifiers.require("table", table);
        return name.length() <= SqlIdentifiers.MAX_LENGTH ? name
                : "fgsfh_" + Integer.toHexString(table.hashCode()) + "_" + table.substring(0, 40);
    }

    /** Whether {@code c} is a connection to MySQL or MariaDB (by its product name, known without a round trip). */
    static boolean isMySql(java.sql.Connection c) throws java.sql.SQLException {
        String product = c.getMetaData().getDatabaseProductName().toLowerCase(java.util.Locale.ROOT);
        return product.contains("mysql") || product.contains("mariadb");
    }

    /** Options for {@link FenceGuardMigrations}. Not thread-safe. */
    public static final class Builder {
        private final DataSource dataSource;
        private final String postgresLocation;
        private final String mysqlLocation; // null: no MySQL/MariaDB migration for this table
        private final UnaryOperator<String> historyTable;
        private String schema = DEFAULT_SCHEMA;
        private String table;

        private Builder(DataSource dataSource, String postgresLocation, String mysqlLocation, String table,
                UnaryOperator<String> historyTable) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
            this.postgresLocation = postgresLocation;
            this.mysqlLocation = mysqlLocation;
            this.table = table;
            this.historyTable = historyTable;
        }

        /**
         * @throws IllegalArgumentException if {@code schema} is not a plain SQL identifier
         */
        public Builder withSchema(String schema) {
            this.schema = SqlIdentifiers.require("schema", schema);
            return this;
        }

        /**
         * @throws IllegalArgumentException if {@code table} is not a plain SQL identifier
         */
        public Builder withTable(String table) {
            this.table = SqlIdentifiers.require("table", table);
            return this;
        }

        /**
         * Runs the pending migrations.
         *
         * @return how many ran (0 when up to date)
         * @throws org.flywaydb.core.api.FlywayException if a migration fails, or if this table has no
         *     migration for the database (the idempotency and singleflight tables exist for PostgreSQL only)
         */
        public int migrate() {
            String location;
            try (java.sql.Connection c = dataSource.getConnection()) {
                boolean mySql = isMySql(c);
                if (mySql && mysqlLocation == null) {
                    throw new org.flywaydb.core.api.FlywayException("table " + table
                            + " has no MySQL/MariaDB migration; fence-guard ships it for PostgreSQL only");
                }
                location = mySql ? mysqlLocation : postgresLocation;
            } catch (java.sql.SQLException e) {
                throw new org.flywaydb.core.api.FlywayException("could not connect to tell which database to migrate: " + e.getMessage(), e);
            }
            return Flyway.configure()
                    .dataSource(dataSource)
                    .locations(location)
                    .schemas(schema)
                    .createSchemas(true)
                    .table(historyTable.apply(table))
                    // The lock table usually joins a schema that already holds the application's tables:
                    // start our own history at version 0 there, so that V1 still runs.
                    .baselineOnMigrate(true)
                    .baselineVersion("0")
                    .placeholders(placeholders(schema, table))
                    .load()
                    .migrate()
                    .migrationsExecuted;
        }
    }
}
