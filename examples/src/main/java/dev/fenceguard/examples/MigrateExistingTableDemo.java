package dev.fenceguard.examples;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.migrations.FenceColumnGenerator;
import dev.fenceguard.migrations.FenceGuardMigrations;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.flywaydb.core.Flyway;

/**
 * Retrofitting fencing onto a table that already has data: an {@code orders} table with rows, the
 * generated Flyway migration that adds the fence column (online-safe, no rewrite), and the
 * repository's write wrapped with the SQL helper.
 *
 * <p>PostgreSQL from {@code --jdbc-url URL}, else embedded PostgreSQL. Exits 1 if anything is off.
 */
public final class MigrateExistingTableDemo {

    public static void main(String[] args) throws Exception {
        Quiet.apply();
        System.exit(run(args, System.out));
    }

    public static int run(String[] args, PrintStream out) throws Exception {
        try (PgSchema pg = PgSchema.fromArgs(args)) {
            String s = pg.name;
            pg.sql().execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL)");
            pg.sql().execute("INSERT INTO orders (id, status) SELECT g, ? FROM generate_series(1, ?) g", "new", 1000);
            out.println("1. an existing table " + s + ".orders with 1000 rows");

            Path migrations = Files.createTempDirectory("fence-guard-migrations");
            try {
                Files.writeString(migrations.resolve("V1__create_orders.sql"), "-- already applied in production\nSELECT 1;\n");
                int status = FenceColumnGenerator.run(new String[] {"--dir", migrations.toString(), "--table", s + ".orders"}, out, out);
                Path generated = migrations.resolve("V2__fence_guard_orders_fence_token.sql");
                out.println("2. generated " + generated.getFileName() + ":");
                Files.readAllLines(generated).forEach(l -> out.println("     " + l));
                String node = one(pg, "SELECT pg_relation_filenode(CAST(? AS regclass))", "orders");
                int applied = Flyway.configure().dataSource(pg.pool).schemas(s).table("flyway_history").baselineOnMigrate(true)
                        .baselineVersion("1").locations("filesystem:" + migrations).load().migrate().migrationsExecuted;
                boolean noRewrite = node.equals(one(pg, "SELECT pg_relation_filenode(CAST(? AS regclass))", "orders"));
                String zeros = one(pg, "SELECT count(*) FROM orders WHERE fence_token = ?", 0L);
                out.println("3. Flyway applied " + applied + " migration; table rewritten: " + (!noRewrite) + "; rows reading fence 0: " + zeros);

                FenceGuardMigrations.builder(pg.pool).withSchema(s).migrate();
                LockClient locks = LockClient.builder(FenceGuardJdbc.builder(pg.pool).withSchema(s).build().lockBackend())
                        .withMetrics(LockMetrics.none()).build();
                FencedTable orders = FencedTable.builder(s, "orders", "id", "fence_token").withKeyType(Long.class).build();
                WriteOutcome first;
                try (Lease lease = locks.acquire("orders:7", Duration.ofSeconds(10), Duration.ofSeconds(5)).orElseThrow()) {
                    first = orders.on(pg.pool).update(7L, lease.fence(), Assignments.of("status", "shipped"));
                    out.println("4. repository write under lease fence " + lease.fence().value() + ": " + first);
                }
                try (Lease older = locks.acquire("orders:7", Duration.ofSeconds(10), Duration.ofSeconds(5)).orElseThrow()) {
                    WriteOutcome next = orders.on(pg.pool).update(7L, older.fence(), Assignments.of("status", "delivered"));
                    out.println("   next holder, fence " + older.fence().value() + ": " + next);
                }
                String row = one(pg, "SELECT status || ' / fence ' || fence_token FROM orders WHERE id = ?", 7L);
                out.println("   row 7 is now: " + row);
                boolean ok = status == 0 && applied == 1 && noRewrite && zeros.equals("1000") && first.isApplied()
                        && row.equals("delivered / fence 2");
                out.println(ok ? "OK" : "FAILED");
                return ok ? 0 : 1;
            } finally {
                deleteTree(migrations); // the demo leaves nothing behind in the temp directory
            }
        }
    }

    private static void deleteTree(Path dir) throws java.io.IOException {
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** The first column of the one row {@code sql} returns, as text; {@code binds} are bound, never spliced in. */
    private static String one(PgSchema pg, String sql, Object... binds) {
        return pg.sql().fetchSingle(sql, binds).get(0, String.class);
    }
}
