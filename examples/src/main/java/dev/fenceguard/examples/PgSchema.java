package dev.fenceguard.examples;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.util.UUID;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A fresh schema on a shared PostgreSQL, dropped on close, and a pool whose connections use it as the
 * current schema: the examples name their tables without a schema, and every value goes in as a bind
 * parameter. The schema name itself is an identifier, which SQL cannot bind; jOOQ quotes it.
 */
final class PgSchema implements AutoCloseable {

    final String name = "fence_guard_demo_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    final HikariDataSource pool;
    private final String url;

    PgSchema(String jdbcUrl) {
        this.url = jdbcUrl;
        DSL.using(plain(jdbcUrl, null), SQLDialect.POSTGRES).createSchema(DSL.name(name)).execute();
        HikariConfig config = new HikariConfig();
        config.setDataSource(plain(jdbcUrl, name));
        config.setMaximumPoolSize(4);
        this.pool = new HikariDataSource(config);
    }

    /**
     * A fresh schema on the PostgreSQL of a demo's command line: {@code --jdbc-url URL}, else embedded
     * PostgreSQL (the one choice QuickStart and MigrateExistingTableDemo offer).
     */
    static PgSchema fromArgs(String[] args) {
        return new PgSchema(args.length == 2 && args[0].equals("--jdbc-url") ? args[1] : TestPostgres.embedded().jdbcUrl());
    }

    /** SQL in this schema. */
    DSLContext sql() {
        return DSL.using(pool, SQLDialect.POSTGRES);
    }

    String version() {
        return sql().fetchSingle("SHOW server_version").get(0, String.class);
    }

    private static DataSource plain(String url, String schema) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(url);
        if (schema != null) {
            ds.setCurrentSchema(schema);
        }
        return ds;
    }

    @Override
    public void close() {
        pool.close();
        DSL.using(plain(url, null), SQLDialect.POSTGRES).dropSchemaIfExists(DSL.name(name)).cascade().execute();
    }
}
