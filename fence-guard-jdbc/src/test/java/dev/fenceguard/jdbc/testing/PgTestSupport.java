package dev.fenceguard.jdbc.testing;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.TableSettings;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/** A schema of its own with a migrated lock table, plus tiny SQL helpers. */
public final class PgTestSupport implements AutoCloseable {
    public final TestPostgres.Schema schema;
    public final DataSource ds;

    public PgTestSupport(String prefix) {
        this(TestPostgres.server(), prefix);
    }

    public PgTestSupport(TestPostgres server, String prefix) {
        schema = server.newSchema(prefix);
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setDataSource(schema.dataSource());
        config.setMaximumPoolSize(12);
        config.setPoolName("fg-test-" + prefix);
        pool = new com.zaxxer.hikari.HikariDataSource(config);
        ds = pool;
    }

    private final com.zaxxer.hikari.HikariDataSource pool;

    /** A migrated lock table {@code table} in this schema, and the settings of a backend on it. */
    public TableSettings lockTable(String table) {
        FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable(table).migrate();
        return TableSettings.of(ds).withSchema(schema.name()).withTable(table);
    }

    /** A migrated lock table {@code table} in this schema, and the lock backend on it. */
    public LockBackend lockBackend(String table) {
        lockTable(table);
        return LockBackends.postgres(ds, schema.name(), table);
    }

    /** A migrated idempotency table {@code table} in this schema, and the settings of a backend on it. */
    public TableSettings idempotencyTable(String table) {
        FenceGuardMigrations.idempotencyBuilder(ds).withSchema(schema.name()).withTable(table).migrate();
        return TableSettings.of(ds).withSchema(schema.name()).withTable(table);
    }

    /**
     * The pool, counting every statement prepared or created on its connections: the statements sent,
     * however they are run (by jOOQ or on the connection directly).
     */
    public DataSource counting(AtomicInteger statements) {
        return CountingStatements.of(ds, statements);
    }

    public String q(String table) {
        return schema.name() + "." + table;
    }

    public List<String> rows(String sql) {
        return schema.query(sql);
    }

    public String one(String sql) {
        List<String> r = rows(sql);
        return r.isEmpty() ? null : r.getFirst();
    }

    public void exec(String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    @Override
    public void close() {
        pool.close();
        schema.close();
    }
}
