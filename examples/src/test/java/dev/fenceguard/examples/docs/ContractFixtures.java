package dev.fenceguard.examples.docs;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.util.Optional;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * What the testkit's contract samples take from their surroundings (the fields a user's test would
 * have): the embedded PostgreSQL of this JVM, with fence-guard's tables in its {@code public} schema as
 * the samples build them by default, and the tables of the samples' own fenced resources.
 */
final class ContractFixtures {

    private ContractFixtures() {}

    /**
     * The embedded PostgreSQL, with the lock, idempotency and flight tables and the samples' resource tables,
     * through a pool as an application has: the storms make thousands of calls, and a new connection per call
     * (about 19 ms each on the CI machine) made them the slowest tests of the build.
     */
    static final DataSource dataSource = migrated(pooled(TestPostgres.embedded().dataSource()));

    static final LockBackend postgresBackend = FenceGuardJdbc.builder(dataSource).build().lockBackend();

    static final IdempotencyBackend postgresIdempotency = FenceGuardJdbc.builder(dataSource).build().idempotencyBackend();

    /** The leader election sample's resource: one row per job, the term of the run that wrote it as its fence. */
    static final FencedTable jobs = FencedTable.builder("public", "jobs", "id", "fence_token").build();

    /** The fenced-resource sample's repository: an order's status, written with a fence. */
    static final OrderRepo repo = new OrderRepo();

    private static DataSource pooled(DataSource server) {
        HikariConfig config = new HikariConfig();
        config.setDataSource(server);
        config.setMaximumPoolSize(10);
        config.setPoolName("contract-fixtures");
        return new HikariDataSource(config); // lives as long as the test JVM, as the embedded server does
    }

    private static DataSource migrated(DataSource ds) {
        FenceGuardMigrations.migrate(ds);
        FenceGuardMigrations.idempotencyBuilder(ds).migrate();
        FenceGuardMigrations.singleflightBuilder(ds).migrate();
        DSL.using(ds, SQLDialect.POSTGRES).execute("CREATE TABLE IF NOT EXISTS public.jobs (id TEXT PRIMARY KEY, last_run TEXT, "
                + "fence_token BIGINT NOT NULL DEFAULT 0)");
        DSL.using(ds, SQLDialect.POSTGRES).execute("CREATE TABLE IF NOT EXISTS public.order_writer (id TEXT PRIMARY KEY, "
                + "status TEXT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)");
        return ds;
    }

    /** A user's repository of orders, whose status update is fenced. */
    static final class OrderRepo {
        private final FencedTable orders = FencedTable.builder("public", "order_writer", "id", "fence_token").build();

        void insert(String id, String status) {
            DSL.using(dataSource, SQLDialect.POSTGRES).execute("INSERT INTO public.order_writer (id, status) VALUES (?, ?)", id, status);
        }

        WriteOutcome updateStatus(String id, String status, FenceToken fence) {
            return orders.on(dataSource).update(id, fence, Assignments.of("status", status));
        }

        Optional<String> status(String id) {
            return DSL.using(dataSource, SQLDialect.POSTGRES).fetchOptional("SELECT status FROM public.order_writer WHERE id = ?", id)
                    .map(r -> r.get(0, String.class));
        }
    }
}
