package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.firestore.FenceGuardFirestore;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.testkit.servers.TestFirestore;
import dev.fenceguard.testkit.servers.TestMariaDb;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;

/** Runs the samples of docs/mysql-mariadb.md (on the test MariaDB) and docs/warm-up.md. */
class SqlDocsSamplesTest {

    @Test
    void mariaDbSetUpMigratesLocksAndWritesTheOrderFenced() throws Exception {
        try (TestMariaDb.Database db = TestMariaDb.server().newDatabase("samples")) {
            db.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, status VARCHAR(20) NOT NULL, "
                    + "fence_token BIGINT NOT NULL DEFAULT 0, fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
            db.execute("INSERT INTO orders (id, status) VALUES (42, 'new')");
            LockClient locks = SqlDocsSamples.mariaDbSetUp(db.dataSource(), db.name());
            assertThat(db.query("SELECT status, fence_token FROM orders WHERE id = 42")).containsExactly("paid|1");
            assertThat(db.query("SELECT lock_id IS NULL FROM fence_guard_locks")).as("released").containsExactly("1");
            assertThat(locks.lookup("orders:42")).isEmpty();
        }
    }

    @Test
    void warmUpsRunAndLeaveNothingBehind() {
        DataSource dataSource = EmbeddedOrders.dataSource();
        String before = rows(dataSource);
        RedisClient client = RedisClient.create(TestRedis.server().uri().toString());
        String prefix = TestRedis.keyPrefix("warmup");
        Firestore db = FirestoreOptions.newBuilder().setProjectId(TestFirestore.newProjectId("warmup"))
                .setEmulatorHost(TestFirestore.server().hostPort()).setCredentials(new FirestoreOptions.EmulatorCredentials())
                .build().getService();
        try (FenceGuardRedis redis = FenceGuardRedis.builder(client).withKeyPrefix(prefix).withFenceKeyPrefix(prefix + "fence:").build()) {
            FenceGuardFirestore firestore = FenceGuardFirestore.builder(db).build();
            SqlDocsSamples.warmUp(dataSource, redis, firestore);
            assertThat(rows(dataSource)).as("no lock row, no order changed").isEqualTo(before);
            assertThat(client.connect().sync().keys(prefix + "*")).as("no Redis key").isEmpty();
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(5));
            try {
                db.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** The lock rows and the orders of the embedded PostgreSQL's public schema. */
    private static String rows(DataSource dataSource) {
        return DSL.using(dataSource, SQLDialect.POSTGRES).fetch("SELECT lock_key, fence, lock_id FROM public.fence_guard_locks "
                + "ORDER BY lock_key").format() + DSL.using(dataSource, SQLDialect.POSTGRES)
                .fetch("SELECT * FROM public.orders ORDER BY id").format();
    }
}
