package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.idempotency.Fingerprint;
import dev.fenceguard.core.idempotency.IdempotencyStore;
import dev.fenceguard.core.idempotency.ResultCodec;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyState;
import dev.fenceguard.jdbc.internal.TableSettings;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.testkit.IdempotencyBackendContract;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The idempotency contract on PostgreSQL, plus the one-statement promise and the stored row. */
class PostgresIdempotencyContractTest extends IdempotencyBackendContract {

    private static PgTestSupport pg;
    private static PostgresIdempotencyBackend backend;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("idem");
        backend = new PostgresIdempotencyBackend(pg.idempotencyTable("idem"));
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    @Override
    protected IdempotencyBackend backend() {
        return backend;
    }

    @Test
    void claimAndRecordAreOneStatementEachAndTheRowIsAsDocumented() throws Exception {
        AtomicInteger statements = new AtomicInteger();
        PostgresIdempotencyBackend counted = new PostgresIdempotencyBackend(TableSettings.of(pg.counting(statements)).withTable("fence_guard_idempotency")
                .withSchema(pg.schema.name()).withTable("idem"));
        LockKey key = LockKey.of("one-statement:" + System.nanoTime());
        Duration d = Duration.ofSeconds(30);

        counted.claim(key, "ab12", 7, d, d, d).toCompletableFuture().join();
        assertThat(statements).as("claim").hasValue(1);
        counted.record(key, 7, IdempotencyState.COMPLETED, new byte[] {1, 2}, d, d).toCompletableFuture().join();
        assertThat(statements).as("claim + record").hasValue(2);
        assertThat(counted.record(key, 6, IdempotencyState.COMPLETED, new byte[] {3}, d, d).toCompletableFuture().join())
                .as("a refused record tells the current fence in the same statement").hasValue(7);
        assertThat(statements).hasValue(3);

        String version = "SELECT xmin || '/' || ctid FROM " + pg.q("idem") + " WHERE idem_key = '" + key.value() + "'";
        String recorded = pg.one(version);
        counted.claim(key, "ab12", 8, d, d, d).toCompletableFuture().join();
        counted.claim(key, "cd34", 9, d, d, d).toCompletableFuture().join();
        assertThat(pg.one(version)).as("a replay and a conflict only read: the row version is unchanged").isEqualTo(recorded);
        assertThat(statements).hasValue(5);

        assertThat(pg.one("SELECT state || '|' || fingerprint || '|' || fence || '|' || encode(result, 'hex') || '|' "
                + "|| (retain_until > expires_at) FROM " + pg.q("idem") + " WHERE idem_key = '" + key.value() + "'"))
                .isEqualTo("C|ab12|7|0102|true");
    }

    @Test
    void theBlockingStoreRunsEachCallOnTheCallersOwnPlatformThread() throws Exception {
        // Issue #31: as the blocking LockClient, the blocking store lends its thread to the call it waits for.
        List<Thread> threads = new CopyOnWriteArrayList<>();
        DataSource watched = (javax.sql.DataSource) Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        threads.add(Thread.currentThread());
                    }
                    try {
                        return method.invoke(pg.ds, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        IdempotencyStore store = IdempotencyStore.builder(
                new PostgresIdempotencyBackend(TableSettings.of(watched).withSchema(pg.schema.name()).withTable("idem"))).build();
        String key = "lent:" + System.nanoTime();
        Fingerprint request = Fingerprint.ofParts("charge", "42");

        var first = store.call(key, request, FenceToken.of(3), Duration.ofSeconds(30),
                ResultCodec.utf8(), () -> "charged");
        var replay = store.call(key, request, FenceToken.of(4), Duration.ofSeconds(30),
                ResultCodec.utf8(), () -> "charged twice");
        assertThat(store.lookup(key)).isPresent();

        assertThat(first.result()).contains("charged");
        assertThat(replay.result()).as("the recorded result, the work not run again").contains("charged");
        // claim + record, the replay's claim, the lookup.
        assertThat(threads).hasSize(4).allSatisfy(t -> assertThat(t).isSameAs(Thread.currentThread()));
    }
}
