package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyState;
import dev.fenceguard.jdbc.internal.TableSettings;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.testkit.IdempotencyBackendContract;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
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
}
