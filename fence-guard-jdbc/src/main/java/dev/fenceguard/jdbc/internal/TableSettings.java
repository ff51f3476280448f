package dev.fenceguard.jdbc.internal;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.internal.SqlIdentifiers;
import java.util.Objects;
import java.util.concurrent.Executor;
import javax.sql.DataSource;

/**
 * What one SQL store of fence-guard-jdbc is built from: where its connections come from, its table,
 * how fences are chosen, and where its blocking work runs. Shared by the lock, idempotency and flight
 * backends of every database, so that each of them holds only its statements; immutable, each
 * {@code with..} checks its value and returns a copy.
 *
 * @param dataSource where each call takes its connection
 * @param schema the table's schema (MariaDB/MySQL: database), a plain identifier
 * @param table the table, a plain identifier
 * @param strategy how fences are chosen (lock tables only)
 * @param executor where each call's blocking JDBC work runs
 */
public record TableSettings(DataSource dataSource, String schema, String table, FenceStrategy strategy, Executor executor) {

    /** PostgreSQL's schema when none is given. */
    public static final String DEFAULT_SCHEMA = "public";
    /** The lock table when none is given. */
    public static final String DEFAULT_LOCK_TABLE = "fence_guard_locks";

    public TableSettings {
        Objects.requireNonNull(dataSource, "dataSource");
        SqlIdentifiers.require("schema", schema);
        SqlIdentifiers.require("table", table);
        Objects.requireNonNull(strategy, "strategy");
        Objects.requireNonNull(executor, "executor");
    }

    /**
     * The lock table {@code public.fence_guard_locks} on {@code dataSource}, {@link FenceStrategy#DENSE},
     * a virtual thread per call.
     */
    public static TableSettings of(DataSource dataSource) {
        return new TableSettings(dataSource, DEFAULT_SCHEMA, DEFAULT_LOCK_TABLE, FenceStrategy.DENSE, BoundedJdbc.VIRTUAL_THREADS);
    }

    public TableSettings withDataSource(DataSource dataSource) {
        return new TableSettings(dataSource, schema, table, strategy, executor);
    }

    public TableSettings withSchema(String schema) {
        return new TableSettings(dataSource, schema, table, strategy, executor);
    }

    public TableSettings withTable(String table) {
        return new TableSettings(dataSource, schema, table, strategy, executor);
    }

    public TableSettings withFenceStrategy(FenceStrategy strategy) {
        return new TableSettings(dataSource, schema, table, strategy, executor);
    }

    public TableSettings withExecutor(Executor executor) {
        return new TableSettings(dataSource, schema, table, strategy, executor);
    }

    /** {@code "schema"."table"} (PostgreSQL): the names are plain identifiers, so quoting is all it takes. */
    public String doubleQuoted() {
        return '"' + schema + "\".\"" + table + '"';
    }

    /** {@code `schema`.`table`} (MariaDB, MySQL). */
    public String backQuoted() {
        return '`' + schema + "`.`" + table + '`';
    }
}
