package dev.fenceguard.examples.docs;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.firestore.FenceGuardFirestore;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.jooq.FencedWriter;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.redis.FenceGuardRedis;
import java.time.Duration;
import javax.sql.DataSource;

/** The samples of docs/mysql-mariadb.md and docs/warm-up.md. */
final class SqlDocsSamples {

    private SqlDocsSamples() {}

    /** On MariaDB, in the database {@code app} of the test's own. */
    static LockClient mariaDbSetUp(DataSource dataSource, String app) throws InterruptedException {
        // docs/mysql-mariadb.md: set up (begin)
        FenceGuardMigrations.builder(dataSource).withSchema(app).migrate();          // <app>.fence_guard_locks
        FenceGuardJdbc jdbc = FenceGuardJdbc.builder(dataSource).withSchema(app).build();   // MariaDB or MySQL: detected
        LockClient locks = LockClient.of(jdbc.lockBackend());
        FencedTable orders = FencedTable.builder(app, "orders", "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").build();
        locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease ->
                orders.on(dataSource).update(42L, lease.fence(), Assignments.of("status", "paid")).orThrow());
        // docs/mysql-mariadb.md: set up (end)
        return locks;
    }

    /** On the embedded PostgreSQL's public schema (as the sample names it), the test Redis and the Firestore emulator. */
    static void warmUp(DataSource dataSource, FenceGuardRedis redis, FenceGuardFirestore firestore) {
        // docs/warm-up.md: warm up at startup (begin)
        LockClient locks = LockClient.of(FenceGuardJdbc.builder(dataSource).build().lockBackend());
        FencedWriter orders = FencedTable.builder("public", "orders", "id", "fence_token").build().on(dataSource);
        locks.warmUp();                                         // or locks.async().warmUp(): a CompletionStage
        orders.warmUp(Assignments.of("status", ""));            // the column sets your writes assign
        redis.fencedWrites().warmUp();                          // FenceGuardRedis; async().warmUp() too
        firestore.fencedWrites().warmUp();                      // FenceGuardFirestore; async().warmUp() too
        // docs/warm-up.md: warm up at startup (end)
    }
}
