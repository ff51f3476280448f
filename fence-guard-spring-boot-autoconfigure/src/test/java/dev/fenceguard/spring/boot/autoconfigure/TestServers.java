package dev.fenceguard.spring.boot.autoconfigure;

import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.fenceguard.testkit.servers.TestFirestore;
import dev.fenceguard.testkit.servers.TestPostgres;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;

/** The real servers of the tests, from fence-guard-testkit's harness, and clean-up of what a test made there. */
final class TestServers {
    private TestServers() {}

    /** A fresh PostgreSQL schema; close it to drop it. */
    static TestPostgres.Schema schema(String prefix) {
        return TestPostgres.server().newSchema(prefix);
    }

    /** A new Lettuce client on the test Redis (it connects on first use). */
    static RedisClient redisClient() {
        return RedisClient.create(TestRedis.server().uri().toString());
    }

    static String redisUrl() {
        return TestRedis.server().uri().toString();
    }

    /** Deletes the keys under {@code prefix}, and only those. */
    static void deleteRedisKeys(String prefix) {
        RedisClient client = redisClient();
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                KeyScanCursor<String> page = c.sync().scan(cursor, ScanArgs.Builder.matches(prefix.replace("{", "\\{") + "*").limit(500));
                if (!page.getKeys().isEmpty()) {
                    c.sync().del(page.getKeys().toArray(String[]::new));
                }
                cursor = page;
            } while (!cursor.isFinished());
        } finally {
            client.shutdown();
        }
    }

    /** A Firestore client on the emulator, in a project of its own (the emulator keeps one database per project). */
    static Firestore firestore(String name) {
        return FirestoreOptions.newBuilder()
                .setProjectId(TestFirestore.newProjectId(name))
                .setEmulatorHost(TestFirestore.server().hostPort())
                .setCredentials(new FirestoreOptions.EmulatorCredentials())
                .build()
                .getService();
    }
}
