package dev.fenceguard.examples.docs;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.testkit.servers.TestPostgres;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * The {@code public} schema of the embedded PostgreSQL that the samples naming {@code public} write to: its
 * lock table, and {@code public.orders} with the row 42 (the shape {@link PostgresSamplesTest} creates, plus
 * {@code paid_at}). Every fence written to the row comes from leases on that lock table, whichever test runs
 * first, so the row only ever sees greater fences.
 */
public final class EmbeddedOrders {

    private EmbeddedOrders() {}

    /** The embedded server's data source, once its lock table and {@code public.orders} (row 42) exist. */
    public static DataSource dataSource() {
        DataSource dataSource = TestPostgres.embedded().dataSource();
        FenceGuardMigrations.migrate(dataSource);
        DSLContext sql = DSL.using(dataSource, SQLDialect.POSTGRES);
        sql.execute("CREATE TABLE IF NOT EXISTS public.orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL, "
                + "items INT NOT NULL DEFAULT 0, fence_token BIGINT NOT NULL DEFAULT 0, fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        sql.execute("ALTER TABLE public.orders ADD COLUMN IF NOT EXISTS paid_at TIMESTAMPTZ");
        sql.execute("INSERT INTO public.orders (id, status) VALUES (42, 'new') ON CONFLICT (id) DO NOTHING");
        return dataSource;
    }

    /** The lock client on the embedded server's {@code public.fence_guard_locks}. */
    static LockClient locks(DataSource dataSource) {
        return LockClient.of(FenceGuardJdbc.builder(dataSource).build().lockBackend());
    }

    static FencedTable orders() {
        return FencedTable.builder("public", "orders", "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").build();
    }

    static void setStatus(DataSource dataSource, String status) {
        DSL.using(dataSource, SQLDialect.POSTGRES).execute("UPDATE public.orders SET status = ? WHERE id = 42", status);
    }

    static String status(DataSource dataSource) {
        return DSL.using(dataSource, SQLDialect.POSTGRES).fetchSingle("SELECT status FROM public.orders WHERE id = 42")
                .get(0, String.class);
    }

    static long fence(DataSource dataSource) {
        return DSL.using(dataSource, SQLDialect.POSTGRES).fetchSingle("SELECT fence_token FROM public.orders WHERE id = 42")
                .get(0, Long.class);
    }
}
