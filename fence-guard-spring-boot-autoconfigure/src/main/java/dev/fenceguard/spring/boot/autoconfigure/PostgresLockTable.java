package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The PostgreSQL lock table named by {@code fence-guard.postgresql.*}: builds the backend on it and
 * checks at startup that it exists.
 */
final class PostgresLockTable {
    private final DataSource dataSource;
    private final FenceGuardProperties properties;
    private volatile LockBackend built;

    PostgresLockTable(DataSource dataSource, FenceGuardProperties properties) {
        this.dataSource = dataSource;
        this.properties = properties;
    }

    LockBackend createBackend() {
        FenceGuardProperties.Postgresql pg = properties.getPostgresql();
        FenceGuardJdbc.Builder builder = FenceGuardJdbc.builder(dataSource);
        Settings.apply("postgresql.schema", pg.getSchema(), builder::withSchema);
        Settings.apply("postgresql.table", pg.getTable(), builder::withLockTable);
        Settings.apply("fence-strategy", properties.getFenceStrategy(), builder::withFenceStrategy);
        LockBackend backend = builder.build().lockBackend();
        built = backend;
        return backend;
    }

    /** Whether {@code backend} is the one this table built (not one of the application's own). */
    boolean built(LockBackend backend) {
        return backend != null && backend == built;
    }

    /**
     * @param flywayAddsIt whether Spring Boot's Flyway run was set to create the table
     * @throws IllegalStateException if the table does not exist, saying how to create it
     */
    void verify(boolean flywayAddsIt) {
        FenceGuardProperties.Postgresql pg = properties.getPostgresql();
        String name = "\"" + pg.getSchema() + "\".\"" + pg.getTable() + "\"";
        boolean exists;
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                exists = rs.getBoolean(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("fence-guard could not check that the lock table " + name + " exists (SQLSTATE "
                    + e.getSQLState() + ")", e);
        }
        if (!exists) {
            throw new IllegalStateException("fence-guard's lock table " + name + " does not exist"
                    + (flywayAddsIt ? " although Spring Boot's Flyway was set to create it (did Flyway run?)"
                            : " and Spring Boot's Flyway does not create it (it needs fence-guard-migrations and spring-boot-flyway"
                                    + " on the class path, spring.flyway.enabled and fence-guard.postgresql.flyway not false)")
                    + ". Create it with FenceGuardMigrations.builder(dataSource).withSchema(\"" + pg.getSchema() + "\").withTable(\""
                    + pg.getTable() + "\").migrate(), turn Flyway on, or point fence-guard.postgresql.schema/table at an"
                    + " existing lock table (fence-guard.postgresql.verify-table=false skips this check)");
        }
    }
}
