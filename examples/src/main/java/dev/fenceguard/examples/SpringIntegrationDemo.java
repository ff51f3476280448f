package dev.fenceguard.examples;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.spring.integration.FencedDistributedLock;
import dev.fenceguard.spring.integration.FencedLockRegistry;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.leader.AbstractCandidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Spring Integration's locks with fences ({@code docs/spring-integration.md}): a {@link FencedLockRegistry} bean
 * where a {@code JdbcLockRegistry} was, a lock whose holder writes with its fence, and
 * {@code LockRegistryLeaderInitiator} electing the node that sends the nightly invoice run, unchanged. Node A
 * leads and records the run with its term; it hands over to node B, whose term is greater; then A, late, writes
 * again with its old term and is refused. The code between the {@code docs/spring-integration.md:} markers is
 * the document's text ({@code checks.SamplesTest} keeps them the same).
 *
 * <pre>
 * ./mvnw -q -pl examples -am -DskipTests package exec:java -Ddemo.main=dev.fenceguard.examples.SpringIntegrationDemo
 * </pre>
 *
 * PostgreSQL from {@code --jdbc-url URL}, else embedded PostgreSQL; everything happens in a schema of its own,
 * dropped at the end. Exits 1 if a write is not refused or applied as told.
 */
public final class SpringIntegrationDemo {

    private SpringIntegrationDemo() {}

    public static void main(String[] args) throws Exception {
        Quiet.apply();
        System.exit(run(args, System.out));
    }

    /** The application's lock configuration: one bean. */
    @Configuration(proxyBeanMethods = false)
    static class Locks {
        // docs/spring-integration.md: bean (begin)
        @Bean
        FencedLockRegistry lockRegistry(DataSource dataSource, @Value("${app.lock-schema:public}") String schema) {
            LockClient locks = LockClient.of(FenceGuardJdbc.builder(dataSource).withSchema(schema).build().lockBackend());
            return FencedLockRegistry.builder(locks).withTtl(Duration.ofSeconds(10)).build();
        }
        // docs/spring-integration.md: bean (end)
    }

    // docs/spring-integration.md: leader (begin)
    /** Sends the nightly invoice run while it leads; the run is recorded with the leader's term. */
    static final class InvoiceRunCandidate extends AbstractCandidate {
        private final FencedLockRegistry registry;
        private final FencedTable runs;
        private final DataSource dataSource;
        final BlockingQueue<FenceToken> terms = new LinkedBlockingQueue<>();

        InvoiceRunCandidate(String node, FencedLockRegistry registry, FencedTable runs, DataSource dataSource) {
            super(node, "invoice-run");
            this.registry = registry;
            this.runs = runs;
            this.dataSource = dataSource;
        }

        @Override
        public void onGranted(Context ctx) {
            FenceToken term = registry.obtain(ctx.getRole()).fence();   // this thread holds the lock: its lease's fence
            runs.on(dataSource).upsert("nightly", term, Assignments.of("sent_by", getId())).orThrow();
            terms.add(term);
        }

        @Override
        public void onRevoked(Context ctx) {
            // stop sending: a write with the old term would be refused anyway
        }
    }
    // docs/spring-integration.md: leader (end)

    /** Runs the story; returns the process exit status. */
    public static int run(String[] args, PrintStream out) throws Exception {
        String url = args.length == 2 && args[0].equals("--jdbc-url") ? args[1] : TestPostgres.embedded().jdbcUrl();
        try (PgSchema pg = new PgSchema(url)) {
            FenceGuardMigrations.builder(pg.pool).withSchema(pg.name).migrate();
            pg.sql().execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)");
            pg.sql().execute("INSERT INTO orders (id, status) VALUES (?, ?)", 42L, "new");
            pg.sql().execute("CREATE TABLE invoice_runs (id TEXT PRIMARY KEY, sent_by TEXT, fence_token BIGINT NOT NULL DEFAULT 0)");
            FencedTable orders = FencedTable.builder(pg.name, "orders", "id", "fence_token").build();
            FencedTable runs = FencedTable.builder(pg.name, "invoice_runs", "id", "fence_token").build();
            DataSource dataSource = pg.pool;

            FencedLockRegistry registry = new Locks().lockRegistry(dataSource, pg.name);
            WriteOutcome paid = markOrder42Paid(registry, orders, dataSource);
            out.println("1. lock, fenced update of order 42 with the lock's fence: " + paid);
            LockClient lockClient = LockClient.of(FenceGuardJdbc.builder(dataSource).withSchema(pg.name).build().lockBackend());
            boolean again = javadocSample(lockClient, orders, dataSource);
            out.println("   tryLock(5 s) and the same update with a new, greater fence: " + (again ? "done" : "lock not had"));

            InvoiceRunCandidate a = new InvoiceRunCandidate("node-a", new Locks().lockRegistry(dataSource, pg.name), runs, dataSource);
            InvoiceRunCandidate b = new InvoiceRunCandidate("node-b", new Locks().lockRegistry(dataSource, pg.name), runs, dataSource);
            LockRegistryLeaderInitiator leaderA = new LockRegistryLeaderInitiator(a.registry, a);
            LockRegistryLeaderInitiator leaderB = new LockRegistryLeaderInitiator(b.registry, b);
            try {
                leaderA.start();
                FenceToken termA = next(a);
                out.println("2. node-a leads with term " + termA.value() + " and records the invoice run");
                leaderB.start();
                leaderA.stop();
                FenceToken termB = next(b);
                out.println("3. node-a hands over; node-b leads with term " + termB.value() + " and records the run");
                WriteOutcome late = runs.on(dataSource).upsert("nightly", termA, Assignments.of("sent_by", "node-a (late)"));
                out.println("4. node-a, late, records the run with term " + termA.value() + ": " + late);
                String row = pg.sql().fetchSingle("SELECT sent_by || ', term ' || fence_token FROM invoice_runs WHERE id = 'nightly'")
                        .get(0, String.class);
                boolean ok = paid.isApplied() && again && termB.value() > termA.value() && late instanceof WriteOutcome.Stale
                        && row.equals("node-b, term " + termB.value());
                out.println("the invoice run was recorded by " + row + (ok ? ": OK" : ": FAILED"));
                return ok ? 0 : 1;
            } finally {
                leaderA.stop();
                leaderB.stop();
            }
        }
    }

    private static FenceToken next(InvoiceRunCandidate candidate) throws InterruptedException {
        FenceToken term = candidate.terms.poll(60, TimeUnit.SECONDS);
        if (term == null) {
            throw new IllegalStateException(candidate.getId() + " was not elected within 60 s");
        }
        return term;
    }

    static WriteOutcome markOrder42Paid(FencedLockRegistry registry, FencedTable orders, DataSource dataSource) {
        // docs/spring-integration.md: usage (begin)
        FencedDistributedLock lock = registry.obtain("orders:42");
        lock.lock();
        try {
            FenceToken fence = lock.fence();                                  // this thread's lease, its fence
            return orders.on(dataSource).update(42L, fence, Assignments.of("status", "paid")).orThrow();
        } finally {
            lock.unlock();                                                    // ConcurrentModificationException if the lease was lost
        }
        // docs/spring-integration.md: usage (end)
    }

    /** The Javadoc sample of {@link FencedLockRegistry}; returns whether the lock was had. */
    static boolean javadocSample(LockClient lockClient, FencedTable orders, DataSource dataSource) throws InterruptedException {
        boolean had = false;
        // dev/fenceguard/spring/integration/FencedLockRegistry.java: usage (begin)
        FencedLockRegistry registry = FencedLockRegistry.builder(lockClient).withTtl(Duration.ofSeconds(30)).build();
        FencedDistributedLock lock = registry.obtain("orders:42");
        if (lock.tryLock(5, TimeUnit.SECONDS)) {
            try {
                orders.on(dataSource).update(42L, lock.fence(), Assignments.of("status", "paid")).orThrow();
            } finally {
                lock.unlock();
            }
        }
        // dev/fenceguard/spring/integration/FencedLockRegistry.java: usage (end)
        had = registry.obtain("orders:42").tryLock();
        if (had) {
            registry.obtain("orders:42").unlock();
        }
        return had;
    }
}
