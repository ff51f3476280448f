package dev.fenceguard.examples;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.idempotency.IdempotencyKey.Profile;
import dev.fenceguard.core.idempotency.IdempotencyKey;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.migrations.FenceGuardMigrations;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Optional;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * The README's quick start and its read-modify-write with {@code claim}, as a program that runs. The
 * code between the {@code README.md:} markers is the README's text, character for character
 * ({@code checks.SamplesTest} fails if the two drift apart).
 *
 * <pre>
 * ./mvnw -q -pl examples -am -DskipTests package exec:java -Ddemo.main=dev.fenceguard.examples.QuickStart
 * ... -Dexec.args="--jdbc-url jdbc:postgresql://127.0.0.1:5432/test?user=postgres"
 * </pre>
 *
 * PostgreSQL from {@code --jdbc-url URL}, else embedded PostgreSQL; everything happens in a schema of
 * its own, dropped at the end. Exits 1 if an outcome or the final row is not as expected.
 */
public final class QuickStart {

    private QuickStart() {}

    public static void main(String[] args) throws Exception {
        Quiet.apply();
        System.exit(run(args, System.out));
    }

    /** Runs both snippets on order 42 and checks the row; returns the process exit status. */
    public static int run(String[] args, PrintStream out) throws Exception {
        try (PgSchema pg = PgSchema.fromArgs(args)) {
            pg.sql().execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL, items INT NOT NULL, "
                    + "fence_token BIGINT NOT NULL DEFAULT 0)");
            pg.sql().execute("INSERT INTO orders (id, status, items) VALUES (?, ?, ?)", 42L, "new", 2);
            out.println("quick start in schema " + pg.name + ": order 42 is new, 2 items");

            FakeGateway gateway = new FakeGateway();
            WriteOutcome paid = payOrder42(pg.pool, pg.name, gateway, 4200).orElseThrow();
            out.println("1. withLock, charge, fenced update: " + paid + "; charges made: " + gateway.charges());

            LockClient locks = LockClient.of(FenceGuardJdbc.builder(pg.pool).withSchema(pg.name).build().lockBackend());
            FencedTable orders = FencedTable.builder(pg.name, "orders", "id", "fence_token").build();
            WriteOutcome added = addItemToOrder42(locks, orders, pg.pool).orElseThrow();
            out.println("2. withLock, claim, read, fenced update: " + added);

            // The holder of step 1 as a zombie: its lease ended, a newer one claimed the row, so it is refused.
            FenceToken stepOne = FenceToken.of(((WriteOutcome.Applied) paid).fence());
            WriteOutcome zombie = orders.on(pg.pool).update(42L, stepOne, Assignments.of("items", 0));
            out.println("3. a zombie with the fence of step 1 sets items to 0: " + zombie);

            String row = pg.sql().fetchSingle("SELECT status || ', ' || items || ' items, fence ' || fence_token FROM orders "
                    + "WHERE id = ?", 42L).get(0, String.class);
            boolean ok = paid.isApplied() && gateway.charges().size() == 1 && added.isApplied()
                    && zombie instanceof WriteOutcome.Stale && row.equals("paid, 3 items, fence " + ((WriteOutcome.Applied) added).fence());
            out.println("order 42 is now: " + row + (ok ? ": OK" : ": FAILED"));
            return ok ? 0 : 1;
        }
    }

    /**
     * The README's quick start: charge order 42 and mark it paid under the lock, in one fenced statement.
     *
     * @param schema where the lock table goes and where {@code orders (id, status, fence_token)} is
     * @return the update's outcome, or empty if the lock was not had within 5 seconds
     */
    static Optional<WriteOutcome> payOrder42(DataSource dataSource, String schema, FakeGateway gateway, long amount)
            throws InterruptedException {
        // README.md: quick start (begin)
        FenceGuardMigrations.builder(dataSource).withSchema(schema).migrate();   // the lock table
        LockClient locks = LockClient.of(FenceGuardJdbc.builder(dataSource).withSchema(schema).build().lockBackend());
        FencedTable orders = FencedTable.builder(schema, "orders", "id", "fence_token").build();

        Optional<WriteOutcome> paid = locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> {
            // ... slow work; the lease is renewed in the background ...
            String key = IdempotencyKey.builder(Profile.STRIPE)           // names the operation, never the lease
                    .scope("orders").id("42").operation("charge").build();
            gateway.charge(key, amount);
            return orders.on(dataSource)                                  // one statement: data and fence together,
                    .update(42L, lease.fence(), Assignments.of("status", "paid"))   // only if fence >= stored fence
                    .orThrow();                                           // StaleFenceException for a zombie
        });
        // README.md: quick start (end)
        return paid;
    }

    /**
     * The README's read-modify-write: claim the row with the lease's fence before reading it, so that no
     * older holder can change it between the read and the write.
     *
     * @return the update's outcome, or empty if the lock was not had within 5 seconds
     */
    static Optional<WriteOutcome> addItemToOrder42(LockClient locks, FencedTable orders, DataSource dataSource)
            throws InterruptedException {
        // README.md: claim (begin)
        Optional<WriteOutcome> added = locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> {
            orders.on(dataSource).claim(42L, lease.fence()).orThrow();    // first: older fences are refused from now on
            int items = readItems(dataSource, 42L);                       // so no zombie writes between read and write
            return orders.on(dataSource).update(42L, lease.fence(), Assignments.of("items", items + 1)).orThrow();
        });
        // README.md: claim (end)
        return added;
    }

    /** An ordinary read of the row, as an application would do it (bound parameter, no fence involved). */
    static int readItems(DataSource dataSource, long orderId) {
        return DSL.using(dataSource, SQLDialect.POSTGRES).fetchSingle("SELECT items FROM orders WHERE id = ?", orderId)
                .get(0, Integer.class);
    }
}
