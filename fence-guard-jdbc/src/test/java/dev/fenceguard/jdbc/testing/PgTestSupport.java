package dev.fenceguard.jdbc.testing;

import com.zaxxer.hikari.HikariConfig;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.TableSettings;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/** A schema of its own with a migrated lock table, plus tiny SQL helpers. */
public final class PgTestSupport extends SqlTestSupport {
    public final TestPostgres.Schema schema;

    public PgTestSupport(String prefix) {
        this(TestPostgres.server(), prefix);
    }

    public PgTestSupport(TestPostgres server, String prefix) {
        this(server.newSchema(prefix), "fg-test-" + prefix);
    }

    private PgTestSupport(TestPostgres.Schema schema, String poolName) {
        super(on(pool(poolName), schema.dataSource()), schema.name(), schema::query, schema::close);
        this.schema = schema;
    }

    private static HikariConfig on(HikariConfig config, DataSource schema) {
        config.setDataSource(schema);
        return config;
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
}
