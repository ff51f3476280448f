package dev.fenceguard.migrations;

import java.sql.Statement;
import java.util.Objects;
import java.util.zip.CRC32;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.migration.Context;
import org.flywaydb.core.api.migration.JavaMigration;

/**
 * A Flyway Java migration that adds a fence column to one of your tables; register it with
 * {@code Flyway.configure().javaMigrations(...)}.
 *
 * <pre>{@code
 * Flyway.configure()
 *       .dataSource(dataSource)
 *       .javaMigrations(new FenceColumnMigration("7", FenceColumn.on("public", "invoices")
 *                                                         .withTombstoneColumn("fence_deleted")))
 *       .load().migrate();
 * }</pre>
 *
 * <p>The checksum covers the generated SQL, so changing the column spec of an applied version is
 * reported by Flyway's validation like an edited SQL file.
 *
 * @since 0.1
 */
public final class FenceColumnMigration implements JavaMigration {

    private final MigrationVersion version;
    private final FenceColumn column;

    /**
     * @param version the Flyway version of this migration, e.g. {@code "7"} or {@code "2026.11.1"}
     * @param column what to add
     * @throws IllegalArgumentException if {@code version} is not a Flyway version
     */
    public FenceColumnMigration(String version, FenceColumn column) {
        this.version = version(version);
        this.column = Objects.requireNonNull(column, "column");
    }

    @Override
    public MigrationVersion getVersion() {
        return version;
    }

    @Override
    public String getDescription() {
        return "fence guard " + column.description();
    }

    @Override
    public Integer getChecksum() {
        return checksum(column.script());
    }

    /** {@code version} as a Flyway version; shared with {@link TombstoneIndexMigration}. */
    static MigrationVersion version(String version) {
        Objects.requireNonNull(version, "version");
        if (!version.matches("\\d+([._]\\d+)*")) {
            throw new IllegalArgumentException("version must be digits separated by '.' or '_', was '" + version + "'");
        }
        return MigrationVersion.fromVersion(version);
    }

    /** The checksum of a generated script, as Flyway compares it; shared with {@link TombstoneIndexMigration}. */
    static int checksum(String script) {
        CRC32 crc = new CRC32();
        crc.update(script.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return (int) crc.getValue();
    }

    @Override
    public boolean canExecuteInTransaction() {
        return true; // SET LOCAL needs the transaction
    }

    @Override
    public void migrate(Context context) throws Exception {
        boolean mysql = FenceGuardMigrations.isMySql(context.getConnection());
        try (Statement statement = context.getConnection().createStatement()) {
            for (String sql : mysql ? column.mysqlStatements() : column.statements()) {
                statement.execute(sql);
            }
        }
    }
}
