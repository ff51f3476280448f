package dev.fenceguard.migrations;

import dev.fenceguard.core.internal.SqlIdentifiers;
import java.util.Objects;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/**
 * Creates or upgrades fence-guard's singleflight table on PostgreSQL with Flyway (the table of
 * {@code PostgresFlightStore}), with a Flyway history table of its own, so it never mixes with the
 * lock table's migrations or yours.
 *
 * <pre>{@code
 * SingleflightMigrations.migrate(dataSource);                          // public.fence_guard_flights
 * SingleflightMigrations.builder(dataSource).withSchema("app").withTable("flights").migrate();
 * }</pre>
 *
 * <p>The layout is documented in {@code docs/singleflight.md} and covered by a test that fails if it changes.
 *
 * @since 0.3
 */
public final class SingleflightMigrations {

    /** Where the singleflight-table migrations live on the class path. */
    public static final String LOCATION = "classpath:db/fence-guard/postgresql-singleflight";
    /** Default name of the singleflight table. */
    public static final String DEFAULT_TABLE = "fence_guard_flights";

    private SingleflightMigrations() {}

    /**
     * Migrates {@code public.fence_guard_flights} to the latest version.
     *
     * @return how many migrations ran (0 when up to date)
     */
    public static int migrate(DataSource dataSource) {
        return builder(dataSource).migrate();
    }

    /** Options for another schema or table name. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** The Flyway history table of singleflight table {@code table}: one per table. */
    public static String historyTable(String table) {
        String name = "fence_guard_sf_history_" + SqlIdentifiers.require("table", table);
        return name.length() <= SqlIdentifiers.MAX_LENGTH ? name
                : "fgsfh_" + Integer.toHexString(table.hashCode()) + "_" + table.substring(0, 40);
    }

    /** Options for {@link SingleflightMigrations}. Not thread-safe. */
    public static final class Builder {
        private final DataSource dataSource;
        private String schema = FenceGuardMigrations.DEFAULT_SCHEMA;
        private String table = DEFAULT_TABLE;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /** @throws IllegalArgumentException if {@code schema} is not a plain SQL identifier */
        public Builder withSchema(String schema) {
            this.schema = SqlIdentifiers.require("schema", schema);
            return this;
        }

        /** @throws IllegalArgumentException if {@code table} is not a plain SQL identifier */
        public Builder withTable(String table) {
            this.table = SqlIdentifiers.require("table", table);
            return this;
        }

        /**
         * Runs the pending migrations.
         *
         * @return how many ran (0 when up to date)
         * @throws org.flywaydb.core.api.FlywayException if a migration fails
         */
        public int migrate() {
            return Flyway.configure()
                    .dataSource(dataSource)
                    .locations(LOCATION)
                    .schemas(schema)
                    .createSchemas(true)
                    .table(historyTable(table))
                    // The table usually joins a schema that already holds the application's tables:
                    // start our own history at version 0 there, so that V1 still runs.
                    .baselineOnMigrate(true)
                    .baselineVersion("0")
                    .placeholders(FenceGuardMigrations.placeholders(schema, table))
                    .load()
                    .migrate()
                    .migrationsExecuted;
        }
    }
}
