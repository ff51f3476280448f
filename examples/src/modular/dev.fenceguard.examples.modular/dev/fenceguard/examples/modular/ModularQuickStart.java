package dev.fenceguard.examples.modular;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.jooq.FencedWriter;
import dev.fenceguard.redis.FenceGuardRedis;
import io.lettuce.core.RedisClient;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The quick start as a modular application: a lock and a fenced update on PostgreSQL, a lock and a
 * fenced SET on Redis, each after a warm-up, and a stale write refused. Arguments: a JDBC URL and a
 * Redis URI. Works in a schema and under a key prefix of its own, removed at the end. Exits 1 if an
 * outcome is not as expected.
 */
public final class ModularQuickStart {

    private ModularQuickStart() {}

    public static void main(String[] args) throws Exception {
        String schema = "fg_modular_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(args[0]);
        boolean ok;
        sql(ds, "CREATE SCHEMA " + schema);
        try {
            sql(ds, "CREATE TABLE " + schema + ".fence_guard_locks (lock_key TEXT NOT NULL PRIMARY KEY, fence BIGINT NOT NULL, "
                    + "lock_id TEXT NULL, expires_at TIMESTAMPTZ NULL, acquired_at TIMESTAMPTZ NULL)");
            // The lock table's second migration (V2): the floor new DENSE rows start above after a purge of lock rows.
            sql(ds, "CREATE TABLE " + schema + ".fence_guard_lock_floors (lock_table TEXT NOT NULL PRIMARY KEY, fence_floor BIGINT NOT NULL)");
            sql(ds, "INSERT INTO " + schema + ".fence_guard_lock_floors (lock_table, fence_floor) VALUES ('fence_guard_locks', 0)");
            sql(ds, "CREATE TABLE " + schema + ".orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)");
            sql(ds, "INSERT INTO " + schema + ".orders (id, status) VALUES (42, 'new')");
            LockClient locks = LockClient.builder(FenceGuardJdbc.builder(ds).withSchema(schema).build().lockBackend())
                    .withMetrics(LockMetrics.none()).build();
            FencedWriter orders = FencedTable.builder(schema, "orders", "id", "fence_token").withKeyType(Long.class)
                    .withMetrics(LockMetrics.none()).build().on(ds);
            locks.warmUp();
            orders.warmUp(Assignments.of("status", ""));
            WriteOutcome paid = locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
                    lease -> orders.update(42L, lease.fence(), Assignments.of("status", "paid"))).orElseThrow();
            FenceToken first = FenceToken.of(((WriteOutcome.Applied) paid).fence());
            locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
                    lease -> orders.update(42L, lease.fence(), Assignments.of("status", "shipped"))).orElseThrow();
            WriteOutcome zombie = orders.update(42L, first, Assignments.of("status", "paid twice"));
            System.out.println("postgres: " + paid + "; a stale write: " + zombie);
            ok = paid.isApplied() && zombie instanceof WriteOutcome.Stale;
        } finally {
            sql(ds, "DROP SCHEMA " + schema + " CASCADE");
        }

        RedisClient client = RedisClient.create(args[1]);
        try (FenceGuardRedis redis = FenceGuardRedis.builder(client).withKeyPrefix(schema + ":").withFenceKeyPrefix(schema + ":fence:")
                .withMetrics(LockMetrics.none()).build()) {
            LockClient locks = LockClient.builder(redis.lockBackend()).withMetrics(LockMetrics.none()).build();
            locks.warmUp();
            redis.fencedWrites().warmUp();
            String key = schema + ":stock";
            WriteOutcome set = locks.withLock("stock", Duration.ofSeconds(30), Duration.ofSeconds(5),
                    lease -> redis.fencedWrites().set(key, lease.fence(), "41")).orElseThrow();
            FenceToken first = FenceToken.of(((WriteOutcome.Applied) set).fence());
            locks.withLock("stock", Duration.ofSeconds(30), Duration.ofSeconds(5),
                    lease -> redis.fencedWrites().set(key, lease.fence(), "40")).orElseThrow();
            WriteOutcome zombie = redis.fencedWrites().set(key, first, "39");
            System.out.println("redis: " + set + "; a stale write: " + zombie);
            ok &= set.isApplied() && zombie instanceof WriteOutcome.Stale;
            client.connect().sync().del(key, redis.fencedWrites().fenceKeyOf(key), redis.lockBackend().fenceKeyOf("stock"));
        } finally {
            client.shutdown();
        }
        System.out.println(ok ? "OK on the module path: " + ModularQuickStart.class.getModule().getName() : "FAILED");
        System.exit(ok ? 0 : 1);
    }

    private static void sql(PGSimpleDataSource ds, String sql) throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
