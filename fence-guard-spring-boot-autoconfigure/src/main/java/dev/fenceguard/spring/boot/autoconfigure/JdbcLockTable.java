package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The lock table named by {@code fence-guard.jdbc.*} in the database of the application's DataSource:
 * learns which database that is (once, on first use), builds the matching lock backend on the table,
 * and checks at startup that the table exists.
 */
final class JdbcLockTable {
    private final DataSource dataSource;
    private final FenceGuardProperties properties;
    private volatile JdbcDatabases.Detected detected;
    private volatile LockBackend built;

    JdbcLockTable(DataSource dataSource, FenceGuardProperties properties) {
        this.dataSource = dataSource;
        this.properties = properties;
    }

    /** The database, from {@code fence-guard.jdbc.database} or else asked of the DataSource once. */
    JdbcDatabases.Detected database() {
        JdbcDatabases.Detected d = detected;
        if (d == null) {
            d = JdbcDatabases.resolve(dataSource, properties.getJdbc());
            detected = d; // a race asks twice and gets the same answer
        }
        return d;
    }

    /** {@code fence-guard.jdbc.schema}, or the database's default: {@code public}, or the connection's database. */
    String schema() {
        return database().schema(properties.getJdbc());
    }

    /**
     * The lock backend of fence-guard-jdbc's entry. When {@code fence-guard.jdbc.database} names the
     * database, startup asks the DataSource nothing, so the entry is built on the backend's first call: a
     * DataSource that does not answer then fails calls with {@code UNAVAILABLE} (health DOWN), not startup.
     */
    LockBackend createBackend() {
        FenceGuardJdbc.Builder entry = JdbcDatabases.entry(dataSource, schema(), properties.getJdbc().getTable(),
                properties.getFenceStrategy());
        LockBackend backend = properties.getJdbc().getDatabase() != null
                ? new DeferredLockBackend(JdbcDatabases.backendName(database().database()), () -> entry.build().lockBackend())
                : entry.build().lockBackend();
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
        String schema = schema();
        String table = properties.getJdbc().getTable();
        String q = database().database() == FenceGuardProperties.JdbcDatabase.POSTGRESQL ? "\"" : "`";
        String name = q + schema + q + "." + q + table + q;
        boolean exists;
        // information_schema answers alike on the three databases, and lists only tables the user may use.
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ?"
                        + " AND table_name = ?")) {
            ps.setString(1, schema);
            ps.setString(2, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                exists = rs.getLong(1) > 0;
            }
        } catch (SQLException e) {
            throw new IllegalStateException("fence-guard could not check that the lock table " + name + " exists (SQLSTATE "
                    + e.getSQLState() + ")", e);
        }
        if (!exists) {
            throw new IllegalStateException("fence-guard's lock table " + name + " does not exist"
                    + (flywayAddsIt ? " although Spring Boot's Flyway was set to create it (did Flyway run?)"
                            : " and Spring Boot's Flyway does not create it (it needs fence-guard-migrations and spring-boot-flyway"
                                    + " on the class path, spring.flyway.enabled and fence-guard.jdbc.flyway not false)")
                    + ". Create it with FenceGuardMigrations.builder(dataSource).withSchema(\"" + schema + "\").withTable(\""
                    + table + "\").migrate(), turn Flyway on, or point fence-guard.jdbc.schema/table at an"
                    + " existing lock table (fence-guard.jdbc.verify-table=false skips this check)");
        }
    }
}
