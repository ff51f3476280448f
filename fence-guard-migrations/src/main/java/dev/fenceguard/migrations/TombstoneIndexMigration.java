package dev.fenceguard.migrations;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Objects;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.migration.Context;
import org.flywaydb.core.api.migration.JavaMigration;

/**
 * A Flyway Java migration that adds the {@link TombstoneIndex} of one of your tables, outside a
 * transaction ({@code CREATE INDEX CONCURRENTLY} cannot run in one); register it with
 * {@code Flyway.configure().javaMigrations(...)}, after the migration that added the tombstone column:
 * {@code javaMigrations(new FenceColumnMigration("7", column), new TombstoneIndexMigration("8",
 * TombstoneIndex.on(column, "id")))}, where {@code column} is the table's {@link FenceColumn} with its
 * tombstone column.
 *
 * <p><b>Flyway's lock.</b> By default Flyway holds its PostgreSQL lock in a transaction left open on another
 * connection, and {@code CREATE INDEX CONCURRENTLY} waits for every open transaction to end: it would wait
 * forever. Configure Flyway with {@code flyway.postgresql.transactional.lock=false} (a session lock
 * instead): in {@code flyway.conf}, or on a {@code FluentConfiguration} with
 * {@code getConfigurationExtension(PostgreSQLConfigurationExtension.class).setTransactionalLock(false)}. This migration fails at once, saying so, when another session of the database sits idle in
 * a transaction holding an advisory lock.
 *
 * <p>After building the index it checks that PostgreSQL marked it valid, and fails naming the index if
 * not (a build that failed earlier leaves an invalid index that {@code IF NOT EXISTS} skips: drop it with
 * {@code DROP INDEX CONCURRENTLY} and migrate again). On MySQL and MariaDB it runs {@link TombstoneIndex#mysqlStatements()}
 * instead (an in-place {@code ADD INDEX}, no table rebuild; nothing to check afterwards). The checksum covers
 * the generated PostgreSQL SQL on both, which the same names determine.
 *
 * @since 0.1
 */
public final class TombstoneIndexMigration implements JavaMigration {

    private final MigrationVersion version;
    private final TombstoneIndex index;

    /**
     * @param version the Flyway version of this migration, e.g. {@code "8"}
     * @param index what to add
     * @throws IllegalArgumentException if {@code version} is not a Flyway version
     */
    public TombstoneIndexMigration(String version, TombstoneIndex index) {
        this.version = FenceColumnMigration.version(version);
        this.index = Objects.requireNonNull(index, "index");
    }

    @Override
    public MigrationVersion getVersion() {
        return version;
    }

    @Override
    public String getDescription() {
        return "fence guard " + index.description();
    }

    @Override
    public Integer getChecksum() {
        return FenceColumnMigration.checksum(index.script());
    }

    @Override
    public boolean canExecuteInTransaction() {
        return false; // CREATE INDEX CONCURRENTLY
    }

    @Override
    public void migrate(Context context) throws Exception {
        if (FenceGuardMigrations.isMySql(context.getConnection())) {
            // InnoDB builds the index in place and atomically: no invalid index is left behind to check for.
            try (Statement statement = context.getConnection().createStatement()) {
                for (String sql : index.mysqlStatements()) {
                    statement.execute(sql);
                }
            }
            return;
        }
        try (Statement statement = context.getConnection().createStatement();
                ResultSet held = statement.executeQuery("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                        + "WHERE l.locktype = 'advisory' AND a.state LIKE 'idle in transaction%' AND a.pid <> pg_backend_pid() "
                        + "AND a.datname = current_database()")) {
            if (held.next() && held.getLong(1) > 0) {
                throw new IllegalStateException("another session holds an advisory lock in an open transaction (Flyway's own lock, unless"
                        + " flyway.postgresql.transactional.lock=false): CREATE INDEX CONCURRENTLY for " + index.description()
                        + " would wait for it forever; configure Flyway with flyway.postgresql.transactional.lock=false");
            }
        }
        try (Statement statement = context.getConnection().createStatement()) {
            statement.execute(index.statement());
        }
        try (PreparedStatement valid = context.getConnection().prepareStatement("SELECT i.indisvalid FROM pg_index i "
                + "JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ?")) {
            valid.setString(1, index.column().schema());
            valid.setString(2, index.name());
            try (ResultSet rs = valid.executeQuery()) {
                if (!rs.next() || !rs.getBoolean(1)) {
                    throw new IllegalStateException("index " + index.column().schema() + "." + index.name() + " is not valid (an earlier"
                            + " CREATE INDEX CONCURRENTLY failed part way): drop it with DROP INDEX CONCURRENTLY and migrate again");
                }
            }
        }
    }
}
