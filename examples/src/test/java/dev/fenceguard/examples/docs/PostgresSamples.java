package dev.fenceguard.examples.docs;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.jooq.FencedWriter;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.migrations.FenceGuardMigrations;
import java.time.Duration;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * The samples of docs/postgresql.md. They use the {@code public} schema as the document does, so they run
 * on a PostgreSQL of their own (the testkit's embedded one), never on a shared server.
 */
final class PostgresSamples {

    private PostgresSamples() {}

    static LockClient setUp(DataSource dataSource) {
        // docs/postgresql.md: set up (begin)
        FenceGuardMigrations.migrate(dataSource);                  // public.fence_guard_locks
        FenceGuardJdbc jdbc = FenceGuardJdbc.builder(dataSource).build();   // learns the database: one connection, once
        LockClient locks = LockClient.of(jdbc.lockBackend());
        // docs/postgresql.md: set up (end)
        return locks;
    }

    static WriteOutcome fencedWrite(DataSource dslContextOrConnectionOrDataSource, Lease lease) {
        // docs/postgresql.md: fenced writes (begin)
        FencedTable orders = FencedTable.builder("public", "orders", "id", "fence_token")
                .withKeyType(Long.class).withTombstoneColumn("fence_deleted").build();   // or builder(ORDERS, ORDERS.ID, ORDERS.FENCE_TOKEN)
        WriteOutcome o = orders.on(dslContextOrConnectionOrDataSource)
                .update(42L, lease.fence(), Assignments.of("status", "paid"));
        // docs/postgresql.md: fenced writes (end)
        return o;
    }

    /** Adds an item to order 42 under its lock; the row's items tell the test it ran. */
    static void claimFirst(LockClient locks, FencedTable orders, DataSource dataSource) throws InterruptedException {
        // docs/postgresql.md: claim first (begin)
        locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> {
            FencedWriter order = orders.on(dataSource);
            order.claim(42L, lease.fence()).orThrow();                    // from here on older fences are Stale
            int items = readItems(dataSource, 42L);                       // your own read
            return order.update(42L, lease.fence(), Assignments.of("items", items + 1)).orThrow();
        });
        // docs/postgresql.md: claim first (end)
    }

    static int readItems(DataSource dataSource, long id) {
        return DSL.using(dataSource, SQLDialect.POSTGRES).fetchSingle("SELECT items FROM public.orders WHERE id = ?", id)
                .get(0, Integer.class);
    }
}
