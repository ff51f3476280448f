package dev.fenceguard.jdbc.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.jdbc.internal.TableSettings;
import dev.fenceguard.migrations.FenceGuardMigrations;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * What the SQL test supports share, whatever the server: a namespace of their own on the test server (a
 * PostgreSQL schema, a MariaDB database) with a pool on it, a migrated lock table in it, and tiny SQL
 * helpers; {@link #close()} closes the pool, then drops the namespace. The subclasses make the namespace
 * and say how a query reads it.
 */
public abstract class SqlTestSupport implements AutoCloseable {

    /** The pool on this namespace. */
    public final HikariDataSource ds;
    private final String namespace;
    private final Function<String, List<String>> query;
    private final Runnable drop;

    /**
     * @param namespace the schema or database name, which qualifies table names
     * @param query runs a query in the namespace, each row's columns joined by {@code |}
     * @param drop drops the namespace
     */
    SqlTestSupport(HikariConfig pool, String namespace, Function<String, List<String>> query, Runnable drop) {
        this.ds = new HikariDataSource(pool);
        this.namespace = namespace;
        this.query = query;
        this.drop = drop;
    }

    /** A pool of 12 connections named {@code poolName}, without its connection settings. */
    static HikariConfig pool(String poolName) {
        HikariConfig config = new HikariConfig();
        config.setMaximumPoolSize(12);
        config.setPoolName(poolName);
        return config;
    }

    /** A migrated lock table {@code table} in this namespace, and the settings of a backend on it. */
    public TableSettings lockTable(String table) {
        FenceGuardMigrations.builder(ds).withSchema(namespace).withTable(table).migrate();
        return TableSettings.of(ds).withSchema(namespace).withTable(table);
    }

    /** {@code table} qualified by this namespace. */
    public String q(String table) {
        return namespace + "." + table;
    }

    public List<String> rows(String sql) {
        return query.apply(sql);
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

    public DataSource dataSource() {
        return ds;
    }

    @Override
    public void close() {
        ds.close();
        drop.run();
    }
}
