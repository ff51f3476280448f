package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.jdbc.internal.TableSettings;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

class PostgresLockBackendTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static PgTestSupport pg;

    @BeforeAll
    static void setUp() {
        pg = new PgTestSupport("pgbackend");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    @Test
    void theStoredRowMatchesTheDocumentedShape() throws Exception {
        PostgresLockBackend backend = new PostgresLockBackend(pg.lockTable("shape"));
        LockClient client = LockClient.builder(backend).withMetrics(LockMetrics.none()).build();
        Lease lease = client.tryAcquire("orders:1", TTL).orElseThrow();
        assertThat(pg.one("SELECT lock_key, fence, lock_id = '" + lease.lockId().value() + "', "
                + "expires_at - acquired_at BETWEEN interval '29 seconds' AND interval '30 seconds' FROM " + pg.q("shape")))
                .isEqualTo("orders:1|1|t|t");
        lease.close();
        assertThat(pg.one("SELECT lock_key, fence, lock_id, expires_at FROM " + pg.q("shape")))
                .as("a released row keeps its fence and forgets the holder").isEqualTo("orders:1|1|null|null");
    }

    @Test
    void exhaustedKeysFailClearlyAndTakeNoLock() throws Exception {
        BlockingBackend backend = BlockingBackend.of(new PostgresLockBackend(pg.lockTable("exhaust")));
        LockKey key = LockKey.of("old-key");
        LockId first = LockId.random();
        backend.tryAcquire(key, first, TTL).orElseThrow();
        backend.release(key, first);
        pg.exec("UPDATE " + pg.q("exhaust") + " SET fence = " + FenceToken.MAX_VALUE);
        assertThatThrownBy(() -> backend.tryAcquire(key, LockId.random(), TTL))
                .isInstanceOfSatisfying(FenceGuardException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.FENCE_EXHAUSTED);
                    assertThat(e.getMessage()).contains("old-key").contains("no lock was taken");
                });
        assertThat(pg.one("SELECT fence, lock_id FROM " + pg.q("exhaust"))).isEqualTo(FenceToken.MAX_VALUE + "|null");
        assertThat(backend.lookup(key)).isEmpty();
    }

    @Test
    void clockFlooredFencesStayAboveEverythingIssuedEvenAfterTheCounterIsLost() throws Exception {
        BlockingBackend floored = BlockingBackend.of(new PostgresLockBackend(pg.lockTable("floored").withFenceStrategy(FenceStrategy.CLOCK_FLOORED)));
        LockKey key = LockKey.of("k");
        long before = ClockFloor.floorAt(Instant.now().minusSeconds(60).toEpochMilli());
        long last = 0;
        for (int i = 0; i < 5; i++) {
            LockId id = LockId.random();
            Grant g = floored.tryAcquire(key, id, TTL).orElseThrow();
            assertThat(g.fence()).isGreaterThan(last).isGreaterThan(before);
            last = g.fence();
            floored.release(key, id);
        }
        // Simulate a failover to a replica that never saw these rows.
        pg.exec("DELETE FROM " + pg.q("floored"));
        assertThat(floored.tryAcquire(key, LockId.random(), TTL).orElseThrow().fence()).isGreaterThan(last);
        assertThat(last).isLessThan(FenceToken.WARN_THRESHOLD);

        // The dense counter, by contrast, starts again at 1: that is why the strategy is a named choice.
        BlockingBackend dense = BlockingBackend.of(new PostgresLockBackend(pg.lockTable("dense")));
        LockId id = LockId.random();
        dense.tryAcquire(key, id, TTL).orElseThrow();
        dense.release(key, id);
        pg.exec("DELETE FROM " + pg.q("dense"));
        assertThat(dense.tryAcquire(key, LockId.random(), TTL).orElseThrow().fence()).isEqualTo(1);
    }

    @Test
    void clockFlooredFencesRiseStrictlyWhenTheRowIsLostWithinOneMillisecond() throws Exception {
        // The server's clock is the test's: a clock_timestamp() in the test schema, found before
        // pg_catalog's by the backend's own connections, reads the instant from a one-row table. So the
        // loss happens inside one server millisecond by construction, not by the machine being fast
        // (an earlier version of this test counted such rounds and found none on a loaded CI machine).
        String clock = pg.q("test_clock");
        pg.exec("CREATE TABLE " + clock + " (t timestamptz NOT NULL)");
        pg.exec("INSERT INTO " + clock + " VALUES (timestamptz '2026-11-23 12:00:00.000100+00')");
        pg.exec("CREATE FUNCTION " + pg.q("clock_timestamp") + "() RETURNS timestamptz LANGUAGE sql STABLE AS "
                + "'SELECT t FROM " + clock + "'");
        PGSimpleDataSource frozen = new PGSimpleDataSource();
        frozen.setURL(TestPostgres.server().jdbcUrl());
        frozen.setOptions("-c search_path=" + pg.schema.name() + ",pg_catalog");
        pg.lockTable("floored_tight"); // migrates the table
        BlockingBackend floored = BlockingBackend.of(new PostgresLockBackend(TableSettings.of(frozen).withSchema(pg.schema.name())
                .withTable("floored_tight").withFenceStrategy(FenceStrategy.CLOCK_FLOORED).withExecutor(Runnable::run)));
        LockKey key = LockKey.of("tight");
        long last = 0;
        for (int round = 0; round < 20; round++) {
            long before = floored.tryAcquire(key, LockId.random(), TTL).orElseThrow().fence();
            pg.exec("DELETE FROM " + pg.q("floored_tight")); // lock and counter lost, as after a failover or a restore
            pg.exec("UPDATE " + clock + " SET t = t + interval '10 microseconds'"); // one fence tick, same millisecond
            LockId next = LockId.random();
            long after = floored.tryAcquire(key, next, TTL).orElseThrow().fence();
            floored.release(key, next);
            assertThat(before).as("round %d, before the loss", round).isGreaterThan(last);
            assertThat(after).as("round %d, first fence after the loss", round).isGreaterThan(before);
            // A floor by whole milliseconds would have repeated the fence here.
            assertThat(after / ClockFloor.PER_MILLISECOND).as("round %d, same server millisecond", round)
                    .isEqualTo(before / ClockFloor.PER_MILLISECOND);
            last = after;
            pg.exec("UPDATE " + clock + " SET t = t + interval '10 microseconds'");
        }
    }

    @Test
    void poolsThatHandOutConnectionsWithoutAutoCommitAreCommitted() throws Exception {
        pg.lockTable("manual_commit");
        DataSource manual = autoCommitOff(pg.ds);
        BlockingBackend backend = BlockingBackend.of(new PostgresLockBackend(TableSettings.of(manual).withSchema(pg.schema.name()).withTable("manual_commit")));
        LockId id = LockId.random();
        backend.tryAcquire(LockKey.of("k"), id, TTL).orElseThrow();
        assertThat(pg.one("SELECT count(*) FROM " + pg.q("manual_commit") + " WHERE lock_id IS NOT NULL"))
                .as("visible from another connection").isEqualTo("1");
        assertThat(backend.release(LockKey.of("k"), id)).isTrue();
        assertThat(pg.one("SELECT count(*) FROM " + pg.q("manual_commit") + " WHERE lock_id IS NOT NULL")).isEqualTo("0");
    }

    @Test
    void aMissingTableIsReportedWithAHint() {
        BlockingBackend backend = BlockingBackend.of(new PostgresLockBackend(TableSettings.of(pg.ds).withSchema(pg.schema.name()).withTable("no_such_table")));
        assertThatThrownBy(() -> backend.tryAcquire(LockKey.of("k"), LockId.random(), TTL))
                .isInstanceOfSatisfying(FenceGuardException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                    assertThat(e.key()).contains("k");
                    assertThat(e.getMessage()).contains("42P01").contains("FenceGuardMigrations").contains("\"no_such_table\"")
                            .contains("\"fence_guard_lock_floors\"");
                });
    }

    @Test
    void aLockTableMadeByHandWithoutItsFloorTableNamesTheFloorTable() {
        // A lock table made before the floor table existed (the first migration's shape, by hand) in a schema of its
        // own: a DENSE acquisition of a new key reads the floor, so it fails, and the hint must name the missing table.
        try (TestPostgres.Schema bare = TestPostgres.server().newSchema("pgnofloor")) {
            bare.execute("CREATE TABLE " + bare.name() + ".locks (lock_key TEXT NOT NULL PRIMARY KEY, fence BIGINT NOT NULL, "
                    + "lock_id TEXT NULL, expires_at TIMESTAMPTZ NULL, acquired_at TIMESTAMPTZ NULL)");
            TableSettings settings = TableSettings.of(pg.ds).withSchema(bare.name()).withTable("locks");
            BlockingBackend dense = BlockingBackend.of(new PostgresLockBackend(settings));
            assertThatThrownBy(() -> dense.tryAcquire(LockKey.of("k"), LockId.random(), TTL))
                    .isInstanceOfSatisfying(FenceGuardException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                        assertThat(e.getMessage()).contains("\"" + bare.name() + "\".\"fence_guard_lock_floors\"")
                                .contains("second migration");
                    });
            assertThat(bare.query("SELECT count(*) FROM " + bare.name() + ".locks")).as("nothing written").containsExactly("0");
            BlockingBackend floored = BlockingBackend.of(new PostgresLockBackend(settings.withFenceStrategy(FenceStrategy.CLOCK_FLOORED)));
            assertThat(floored.tryAcquire(LockKey.of("k"), LockId.random(), TTL)).as("CLOCK_FLOORED fences read no floor")
                    .isPresent();
        }
    }

    @Test
    void anUnreachableServerIsUnavailable() {
        PGSimpleDataSource nowhere = new PGSimpleDataSource();
        nowhere.setURL("jdbc:postgresql://127.0.0.1:1/test?user=postgres&connectTimeout=2");
        BlockingBackend backend = BlockingBackend.of(new PostgresLockBackend(TableSettings.of(nowhere)));
        assertThatThrownBy(() -> backend.tryAcquire(LockKey.of("k"), LockId.random(), TTL))
                .isInstanceOfSatisfying(FenceGuardException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
                    assertThat(e.getMessage()).contains("SQLSTATE 08001").contains("refused");
                    // The cause chain keeps the driver's classes (messages redacted) for debugging.
                    assertThat(e.getCause()).hasMessageStartingWith("org.postgresql.util.PSQLException: SQLSTATE 08001");
                    assertThat(e.getCause().getCause()).hasMessageStartingWith("java.net.ConnectException");
                });
    }

    @Test
    void badNamesAndKeysFailBeforeAnySql() throws Exception {
        PostgresLockBackend backend = new PostgresLockBackend(pg.lockTable("badinput"));
        LockClient client = LockClient.builder(backend).withMetrics(LockMetrics.none()).build();
        for (String bad : List.of("locks\"; DROP TABLE x; --", "a;b", "--", "ünï", "x".repeat(10_000), "a\0b", "")) {
            assertThatThrownBy(() -> FenceGuardJdbc.builder(pg.ds).withLockTable(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("lock table must");
            assertThatThrownBy(() -> FenceGuardJdbc.builder(pg.ds).withSchema(bad)).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> client.tryAcquire("k".repeat(10_000), TTL)).hasMessageContaining("at most 512 UTF-8 bytes, was 10000");
        assertThatThrownBy(() -> client.tryAcquire("a\0b", TTL)).hasMessageContaining("NUL");
        assertThatThrownBy(() -> client.tryAcquire("a\uD800", TTL)).hasMessageContaining("unpaired surrogate");
        // Keys full of SQL are just keys: bound, never rendered.
        try (Lease lease = client.tryAcquire("'; DROP TABLE x; --", TTL).orElseThrow()) {
            assertThat(lease.fence().value()).isEqualTo(1);
        }
        assertThat(pg.rows("SELECT lock_key FROM " + pg.q("badinput"))).containsExactly("'; DROP TABLE x; --");
    }

    /** A DataSource whose connections come with auto-commit off, like some pool configurations. */
    private static DataSource autoCommitOff(DataSource inner) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    Object result = method.invoke(inner, args);
                    if (result instanceof Connection c) {
                        c.setAutoCommit(false);
                    }
                    return result;
                });
    }

}
