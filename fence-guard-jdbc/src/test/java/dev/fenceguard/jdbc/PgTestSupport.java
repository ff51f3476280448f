package dev.fenceguard.jdbc;

import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/** A schema of its own with a migrated lock table, plus tiny SQL helpers. */
final class PgTestSupport implements AutoCloseable {
    final TestPostgres.Schema schema;
    final DataSource ds;

    PgTestSupport(String prefix) {
        this(TestPostgres.server(), prefix);
    }

    PgTestSupport(TestPostgres server, String prefix) {
        schema = server.newSchema(prefix);
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setDataSource(schema.dataSource());
        config.setMaximumPoolSize(12);
        config.setPoolName("fg-test-" + prefix);
        pool = new com.zaxxer.hikari.HikariDataSource(config);
        ds = pool;
    }

    private final com.zaxxer.hikari.HikariDataSource pool;

    PostgresLockBackend.Builder backend(String table) {
        FenceGuardMigrations.builder(ds).withSchema(schema.name()).withTable(table).migrate();
        return PostgresLockBackend.builder(ds).withSchema(schema.name()).withTable(table);
    }

    /** A migrated idempotency table {@code table} in this schema, and a builder for its backend. */
    PostgresIdempotencyBackend.Builder idempotency(String table) {
        FenceGuardMigrations.idempotencyBuilder(ds).withSchema(schema.name()).withTable(table).migrate();
        return PostgresIdempotencyBackend.builder(ds).withSchema(schema.name()).withTable(table);
    }

    /**
     * The pool, counting every statement prepared or created on its connections: the statements sent,
     * however they are run (by jOOQ or on the connection directly).
     */
    DataSource counting(AtomicInteger statements) {
        return CountingStatements.of(ds, statements);
    }

    String q(String table) {
        return schema.name() + "." + table;
    }

    List<String> rows(String sql) {
        return schema.query(sql);
    }

    String one(String sql) {
        List<String> r = rows(sql);
        return r.isEmpty() ? null : r.getFirst();
    }

    void exec(String sql) throws SQLException {
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
