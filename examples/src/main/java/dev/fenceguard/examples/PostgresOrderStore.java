package dev.fenceguard.examples;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.migrations.FenceColumn;
import dev.fenceguard.migrations.FenceGuardMigrations;

/**
 * The demo's lock and order in PostgreSQL: the lock table and an {@code orders} table in a schema of
 * their own, dropped on close. The fenced write is {@link FencedTable}'s update; the naive one is a
 * plain {@code UPDATE} that ignores the fence.
 */
final class PostgresOrderStore extends OrderStore {

    private final PgSchema pg;
    private final FencedTable orders;

    private PostgresOrderStore(PgSchema pg, FenceGuardJdbc jdbc, String origin) {
        super("PostgreSQL " + pg.version() + " (" + origin + ")", jdbc.lockBackend(), jdbc.idempotencyBackend());
        this.pg = pg;
        this.orders = FencedTable.builder(pg.name, "orders", "id", "fence_token").withMetrics(LockMetrics.none()).build();
    }

    /** Opens a store in a fresh schema on {@code jdbcUrl}; {@code origin} says where the server came from. */
    static PostgresOrderStore open(String jdbcUrl, String origin) {
        PgSchema pg = new PgSchema(jdbcUrl);
        try {
            FenceGuardMigrations.builder(pg.pool).withSchema(pg.name).migrate();
            pg.sql().execute("CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT NOT NULL)");
            for (String statement : FenceColumn.on(pg.name, "orders").statements()) {
                if (!statement.startsWith("SET LOCAL")) { // SET LOCAL needs a transaction; these run one by one here
                    pg.sql().execute(statement);
                }
            }
            FenceGuardMigrations.idempotencyBuilder(pg.pool).withSchema(pg.name).migrate();
            return new PostgresOrderStore(pg, FenceGuardJdbc.builder(pg.pool).withSchema(pg.name).build(), origin);
        } catch (RuntimeException e) {
            pg.close();
            throw e;
        }
    }

    @Override
    void createOrder(String id) {
        pg.sql().execute("INSERT INTO orders (id, status) VALUES (?, ?)", id, "new");
    }

    @Override
    WriteOutcome writeStatus(String id, String status, FenceToken fence, boolean fenced) {
        if (fenced) {
            return orders.on(pg.pool).update(id, fence, Assignments.of("status", status));
        }
        pg.sql().execute("UPDATE orders SET status = ? WHERE id = ?", status, id);
        return new WriteOutcome.Applied(orders.name() + "[id=" + id + "]", fence.value());
    }

    @Override
    String readStatus(String id) {
        return pg.sql().fetchSingle("SELECT status FROM orders WHERE id = ?", id).get(0, String.class);
    }

    @Override
    public void close() {
        pg.close();
    }
}
