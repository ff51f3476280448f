package dev.fenceguard.examples;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.firestore.FencedFirestore;
import dev.fenceguard.firestore.FirestoreLockBackend;
import dev.fenceguard.jdbc.Assignments;
import dev.fenceguard.jdbc.FencedTable;
import dev.fenceguard.jdbc.PostgresLockBackend;
import dev.fenceguard.migrations.FenceColumn;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.redis.FencedRedis;
import dev.fenceguard.redis.RedisLockBackend;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/** The three {@link OrderStore}s of the demo. Each works in a namespace of its own and cleans up. */
final class Stores {

    private Stores() {}

    /** A pool on {@code jdbcUrl} whose connections use a fresh schema, dropped on close. */
    static final class PgSchema implements AutoCloseable {
        final String schema = "fence_guard_demo_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        final HikariDataSource pool;
        private final String url;

        PgSchema(String jdbcUrl) throws Exception {
            this.url = jdbcUrl;
            exec(plain(jdbcUrl, null), "CREATE SCHEMA " + schema);
            HikariConfig config = new HikariConfig();
            config.setDataSource(plain(jdbcUrl, schema));
            config.setMaximumPoolSize(4);
            this.pool = new HikariDataSource(config);
        }

        static DataSource plain(String url, String schema) {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setURL(url);
            if (schema != null) {
                ds.setCurrentSchema(schema);
            }
            return ds;
        }

        static void exec(DataSource ds, String sql) throws Exception {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute(sql);
            }
        }

        String version() throws Exception {
            try (Connection c = pool.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW server_version")) {
                rs.next();
                return rs.getString(1);
            }
        }

        @Override
        public void close() throws Exception {
            pool.close();
            exec(plain(url, null), "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    static OrderStore postgres(String jdbcUrl, String origin) throws Exception {
        PgSchema pg = new PgSchema(jdbcUrl);
        FenceGuardMigrations.builder(pg.pool).withSchema(pg.schema).migrate();
        PgSchema.exec(pg.pool, "CREATE TABLE " + pg.schema + ".orders (id TEXT PRIMARY KEY, status TEXT NOT NULL)");
        for (String sql : FenceColumn.on(pg.schema, "orders").statements()) {
            if (!sql.startsWith("SET LOCAL")) { // SET LOCAL needs a transaction; these run one by one here
                PgSchema.exec(pg.pool, sql);
            }
        }
        LockClient locks = LockClient.builder(PostgresLockBackend.builder(pg.pool).withSchema(pg.schema).build())
                .withMetrics(LockMetrics.none()).build();
        FencedTable orders = FencedTable.builder(pg.schema, "orders", "id", "fence_token").withMetrics(LockMetrics.none()).build();
        String description = "PostgreSQL " + pg.version() + " (" + origin + ")";
        return new OrderStore() {
            @Override
            public String describe() {
                return description;
            }

            @Override
            public LockClient locks() {
                return locks;
            }

            @Override
            public void createOrder(String id) throws Exception {
                PgSchema.exec(pg.pool, "INSERT INTO " + pg.schema + ".orders (id, status) VALUES ('" + id + "', 'new')");
            }

            @Override
            public WriteOutcome writeStatus(String id, String status, FenceToken fence, boolean fenced) throws Exception {
                if (fenced) {
                    return orders.on(pg.pool).update(id, fence, Assignments.of("status", status));
                }
                try (Connection c = pg.pool.getConnection();
                        var ps = c.prepareStatement("UPDATE " + pg.schema + ".orders SET status = ? WHERE id = ?")) {
                    ps.setString(1, status);
                    ps.setString(2, id);
                    ps.executeUpdate();
                }
                return new WriteOutcome.Applied(pg.schema + ".orders[id=" + id + "]", fence.value());
            }

            @Override
            public String readStatus(String id) throws Exception {
                try (Connection c = pg.pool.getConnection(); Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SELECT status FROM " + pg.schema + ".orders WHERE id = '" + id + "'")) {
                    rs.next();
                    return rs.getString(1);
                }
            }

            @Override
            public void close() throws Exception {
                pg.close();
            }
        };
    }

    static OrderStore redis(String uri) {
        RedisClient client = RedisClient.create(uri);
        StatefulRedisConnection<String, String> conn = client.connect();
        String prefix = "fence-guard-demo:" + UUID.randomUUID().toString().substring(0, 8) + ":";
        RedisLockBackend backend = RedisLockBackend.builder(conn).withKeyPrefix(prefix).build();
        FencedRedis guard = FencedRedis.builder(conn).withLockKeyPrefixes(backend.keyPrefix()).withFenceKeyPrefix(prefix + "fence:")
                .withMetrics(LockMetrics.none()).build();
        LockClient locks = LockClient.builder(backend).withMetrics(LockMetrics.none()).build();
        return new OrderStore() {
            @Override
            public String describe() {
                return "Redis at " + uri;
            }

            @Override
            public LockClient locks() {
                return locks;
            }

            @Override
            public void createOrder(String id) {
                conn.sync().set(prefix + "order:" + id, "new");
            }

            @Override
            public WriteOutcome writeStatus(String id, String status, FenceToken fence, boolean fenced) {
                if (fenced) {
                    return guard.set(prefix + "order:" + id, status, fence);
                }
                conn.sync().set(prefix + "order:" + id, status);
                return new WriteOutcome.Applied(prefix + "order:" + id, fence.value());
            }

            @Override
            public String readStatus(String id) {
                return conn.sync().get(prefix + "order:" + id);
            }

            @Override
            public void close() {
                var keys = conn.sync().keys(prefix.replace("*", "\\*") + "*");
                if (!keys.isEmpty()) {
                    conn.sync().del(keys.toArray(String[]::new));
                }
                conn.close();
                client.shutdown();
            }
        };
    }

    static OrderStore firestore(String emulatorHost) {
        Firestore db = FirestoreOptions.newBuilder().setProjectId("fence-guard-demo-" + UUID.randomUUID().toString().substring(0, 8))
                .setEmulatorHost(emulatorHost).setCredentials(new FirestoreOptions.EmulatorCredentials()).build().getService();
        LockClient locks = LockClient.builder(FirestoreLockBackend.builder(db).build())
                .withMetrics(LockMetrics.none()).build();
        FencedFirestore guard = FencedFirestore.builder(db).withMetrics(LockMetrics.none()).build();
        return new OrderStore() {
            @Override
            public String describe() {
                return "Firestore emulator at " + emulatorHost;
            }

            @Override
            public LockClient locks() {
                return locks;
            }

            @Override
            public void createOrder(String id) throws Exception {
                doc(id).set(Map.of("status", "new")).get();
            }

            @Override
            public WriteOutcome writeStatus(String id, String status, FenceToken fence, boolean fenced) throws Exception {
                if (fenced) {
                    return guard.update(doc(id), fence, Map.of("status", status));
                }
                doc(id).update(Map.of("status", status)).get();
                return new WriteOutcome.Applied(doc(id).getPath(), fence.value());
            }

            @Override
            public String readStatus(String id) throws Exception {
                return doc(id).get().get().getString("status");
            }

            private DocumentReference doc(String id) {
                return db.collection("orders").document(id);
            }

            @Override
            public void close() throws Exception {
                db.close();
            }
        };
    }
}
