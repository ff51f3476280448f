package dev.fenceguard.examples;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.idempotency.IdempotencyMetrics;
import dev.fenceguard.core.idempotency.IdempotencyStore;
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
final class PostgresOrderStore implements OrderStore {

    private final PgSchema pg;
    private final LockClient locks;
    private final FencedTable orders;
    private final IdempotencyStore charges;
    private final String description;

    private PostgresOrderStore(PgSchema pg, String origin) {
        this.pg = pg;
        FenceGuardMigrations.builder(pg.pool).withSchema(pg.name).migrate();
        pg.sql().execute("CREATE TABLE orders (id TEXT PRIMARY KEY, status TEXT NOT NULL)");
        for (String statement : FenceColumn.on(pg.name, "orders").statements()) {
            if (!statement.startsWith("SET LOCAL")) { // SET LOCAL needs a transaction; these run one by one here
                pg.sql().execute(statement);
            }
        }
        FenceGuardJdbc jdbc = FenceGuardJdbc.builder(pg.pool).withSchema(pg.name).build();
        this.locks = LockClient.builder(jdbc.lockBackend()).withMetrics(LockMetrics.none()).build();
        this.orders = FencedTable.builder(pg.name, "orders", "id", "fence_token").withMetrics(LockMetrics.none()).build();
        FenceGuardMigrations.idempotencyBuilder(pg.pool).withSchema(pg.name).migrate();
        this.charges = IdempotencyStore.builder(jdbc.idempotencyBackend())
                .withMetrics(IdempotencyMetrics.none()).build();
        this.description = "PostgreSQL " + pg.version() + " (" + origin + ")";
    }

    /** Opens a store in a fresh schema on {@code jdbcUrl}; {@code origin} says where the server came from. */
    static PostgresOrderStore open(String jdbcUrl, String origin) {
        PgSchema pg = new PgSchema(jdbcUrl);
        try {
            return new PostgresOrderStore(pg, origin);
        } catch (RuntimeException e) {
            pg.close();
            throw e;
        }
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public LockClient locks() {
        return locks;
    }

    @Override
    public IdempotencyStore charges() {
        return charges;
    }

    @Override
    public void createOrder(String id) {
        pg.sql().execute("INSERT INTO orders (id, status) VALUES (?, ?)", id, "new");
    }

    @Override
    public WriteOutcome writeStatus(String id, String status, FenceToken fence, boolean fenced) {
        if (fenced) {
            return orders.on(pg.pool).update(id, fence, Assignments.of("status", status));
        }
        pg.sql().execute("UPDATE orders SET status = ? WHERE id = ?", status, id);
        return new WriteOutcome.Applied(orders.name() + "[id=" + id + "]", fence.value());
    }

    @Override
    public String readStatus(String id) {
        return pg.sql().fetchSingle("SELECT status FROM orders WHERE id = ?", id).get(0, String.class);
    }

    @Override
    public void close() {
        pg.close();
    }
}
