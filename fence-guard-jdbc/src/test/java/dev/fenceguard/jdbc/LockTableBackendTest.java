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
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.TableSettings;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * What the backends on the MySQL/MariaDB lock table do beyond the shared contract: the stored row, exhaustion,
 * the clock floor, keys as bytes. {@link MariaDbLockBackendTest} and {@link MySqlLockBackendTest} run it.
 */
abstract class LockTableBackendTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    /** The server, with a database of this class's own. */
    abstract MariaTestSupport server();

    /** A backend on a migrated lock table {@code table}. */
    abstract LockBackend backend(String table, FenceStrategy strategy);

    /** A backend on the table {@code settings} name, as they are (nothing migrated). */
    abstract LockBackend backendOn(TableSettings settings);

    private LockBackend backend(String table) {
        return backend(table, FenceStrategy.DENSE);
    }

    @Test
    void theStoredRowMatchesTheDocumentedShape() throws Exception {
        LockClient client = LockClient.builder(backend("shape")).withMetrics(LockMetrics.none()).build();
        Lease lease = client.tryAcquire("orders:1", TTL).orElseThrow();
        assertThat(server().one("SELECT CONCAT_WS('|', CAST(lock_key AS CHAR), fence, lock_id = '" + lease.lockId().value() + "', "
                + "TIMESTAMPDIFF(MICROSECOND, acquired_at, expires_at) = 30000000, ABS(TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), acquired_at)) < 60)"
                + " FROM " + server().q("shape"))).as("UTC times, expiry = acquired + ttl").isEqualTo("orders:1|1|1|1|1");
        assertThat(lease.expiresAt()).isBetween(Instant.now().plusSeconds(20), Instant.now().plusSeconds(40));
        lease.close();
        assertThat(server().one("SELECT CONCAT_WS('|', CAST(lock_key AS CHAR), fence, COALESCE(lock_id, 'null'), COALESCE(expires_at, 'null')) FROM "
                + server().q("shape"))).as("a released row keeps its fence and forgets the holder").isEqualTo("orders:1|1|null|null");
    }

    @Test
    void keysThatTextCollationsWouldConfuseAreDistinctLocks() {
        LockClient client = LockClient.builder(backend("collation")).withMetrics(LockMetrics.none()).build();
        List<String> keys = List.of("orders:1", "Orders:1", "orders:1 ", "orders:1\t", "straße", "strasse", "é", "e\u0301x");
        List<Lease> leases = keys.stream().map(k -> client.tryAcquire(k, TTL).orElseThrow(() -> new AssertionError("held: " + k))).toList();
        assertThat(leases).allSatisfy(l -> assertThat(l.fence().value()).isEqualTo(1));
        assertThat(server().one("SELECT COUNT(*) FROM " + server().q("collation"))).isEqualTo(String.valueOf(keys.size()));
        leases.forEach(Lease::close);
    }

    @Test
    void exhaustedKeysFailClearlyAndTakeNoLock() throws Exception {
        BlockingBackend backend = BlockingBackend.of(backend("exhaust"));
        LockKey key = LockKey.of("old-key");
        LockId first = LockId.random();
        backend.tryAcquire(key, first, TTL).orElseThrow();
        backend.release(key, first);
        server().exec("UPDATE " + server().q("exhaust") + " SET fence = " + FenceToken.MAX_VALUE);
        assertThatThrownBy(() -> backend.tryAcquire(key, LockId.random(), TTL)).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.FENCE_EXHAUSTED);
            assertThat(e.getMessage()).contains("old-key").contains("no lock was taken");
        });
        assertThat(server().one("SELECT CONCAT_WS('|', fence, COALESCE(lock_id, 'null')) FROM " + server().q("exhaust")))
                .isEqualTo(FenceToken.MAX_VALUE + "|null");
        assertThat(backend.lookup(key)).isEmpty();
    }

    @Test
    void clockFlooredFencesStayAboveEverythingIssuedEvenAfterTheCounterIsLost() throws Exception {
        BlockingBackend floored = BlockingBackend.of(backend("floored", FenceStrategy.CLOCK_FLOORED));
        LockKey key = LockKey.of("k");
        long before = ClockFloor.floorAt(Instant.now().minusSeconds(60).toEpochMilli());
        long after = ClockFloor.floorAt(Instant.now().plusSeconds(60).toEpochMilli());
        long last = 0;
        for (int i = 0; i < 5; i++) {
            LockId id = LockId.random();
            Grant g = floored.tryAcquire(key, id, TTL).orElseThrow();
            assertThat(g.fence()).isGreaterThan(last).isGreaterThan(before).isLessThan(after);
            last = g.fence();
            floored.release(key, id);
        }
        server().exec("DELETE FROM " + server().q("floored")); // a failover to a replica that never saw these rows
        assertThat(floored.tryAcquire(key, LockId.random(), TTL).orElseThrow().fence()).isGreaterThan(last);

        BlockingBackend dense = BlockingBackend.of(backend("dense"));
        LockId id = LockId.random();
        dense.tryAcquire(key, id, TTL).orElseThrow();
        dense.release(key, id);
        server().exec("DELETE FROM " + server().q("dense"));
        assertThat(dense.tryAcquire(key, LockId.random(), TTL).orElseThrow().fence()).as("the dense counter starts again").isEqualTo(1);
    }

    @Test
    void anExtendOfAKeyNeverLockedRevivesNothingAndIssuesNoFence() throws Exception {
        BlockingBackend backend = BlockingBackend.of(backend("extend"));
        LockKey key = LockKey.of("never");
        assertThat(backend.extend(key, LockId.random(), TTL)).isEmpty();
        assertThat(backend.lookup(key)).isEmpty();
        assertThat(backend.tryAcquire(key, LockId.random(), TTL).orElseThrow().fence()).as("the first fence is still 1").isEqualTo(1);
    }

    @Test
    void aGrantThatWaitedBehindARowLockLastsItsWholeTtlFromTheWrite() throws Exception {
        LockBackend backend = backend("waited");
        BlockingBackend blocking = BlockingBackend.of(backend);
        LockKey key = LockKey.of("k");
        LockId earlier = LockId.random();
        blocking.tryAcquire(key, earlier, TTL).orElseThrow();
        blocking.release(key, earlier); // the row exists and is free: only another transaction's row lock is in the way
        Duration ttl = Duration.ofSeconds(1);
        Waited<Optional<Grant>> acquired = behindRowLock("waited", ttl, () -> backend.tryAcquire(key, LockId.random(), ttl, Duration.ofSeconds(60)));
        Grant grant = acquired.result().orElseThrow(() -> new AssertionError("refused a free row"));
        assertThat(grant.expiresAt()).as("expiry counts from the write, after the wait, not from the statement's start")
                .isAfterOrEqualTo(acquired.released().plus(ttl));
        assertThat(blocking.lookup(key)).as("the grant is live on the server").hasValueSatisfying(info ->
                assertThat(info.fence().value()).isEqualTo(grant.fence()));
    }

    @Test
    void anExtendThatWaitedBehindARowLockCountsItsTtlFromTheWrite() throws Exception {
        LockBackend backend = backend("waited_extend");
        BlockingBackend blocking = BlockingBackend.of(backend);
        LockKey key = LockKey.of("k");
        LockId holder = LockId.random();
        blocking.tryAcquire(key, holder, TTL).orElseThrow();
        Duration ttl = Duration.ofSeconds(1);
        Waited<Optional<Instant>> extended = behindRowLock("waited_extend", ttl, () -> backend.extend(key, holder, ttl, Duration.ofSeconds(60)));
        assertThat(extended.result()).as("extended").hasValueSatisfying(expiry ->
                assertThat(expiry).as("the new expiry counts from the write").isAfterOrEqualTo(extended.released().plus(ttl)));
        assertThat(blocking.lookup(key)).as("live on the server").isPresent();
    }

    /** The answer of a call held back behind a row lock, and the server's time just before the lock was let go. */
    private record Waited<T>(T result, Instant released) {}

    /**
     * Sends {@code call} while another transaction holds the row lock of key {@code k} in {@code table}, holds it back
     * until the server's clock has passed one {@code ttl} after the call reached the server, then lets it through.
     */
    private <T> Waited<T> behindRowLock(String table, Duration ttl, Supplier<CompletionStage<T>> call)
            throws Exception {
        try (Connection holder = server().dataSource().getConnection(); Statement s = holder.createStatement()) {
            holder.setAutoCommit(false);
            s.executeQuery("SELECT fence FROM " + server().q(table) + " WHERE lock_key = X'6B' FOR UPDATE").close();
            CompletableFuture<T> running = call.get().toCompletableFuture();
            Instant reached = awaitStatementOn(s, table, running);
            awaitServerTimePast(s, reached.plus(ttl).plusMillis(100)); // longer than the TTL, by the server's clock
            Instant released = serverNow(s);
            holder.commit();
            return new Waited<>(running.get(60, TimeUnit.SECONDS), released);
        }
    }

    /**
     * Polls the server until another connection runs a statement on {@code table} (it can only wait there, for the
     * row lock this test holds); returns the server's time then, after that statement started.
     */
    private Instant awaitStatementOn(Statement s, String table, CompletableFuture<?> call) throws Exception {
        String running = "FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND COMMAND = 'Query' AND INFO LIKE '%`"
                + server().db.name() + "`.`" + table + "`%'";
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < giveUp) {
            if (call.isDone()) {
                throw new AssertionError("the call did not wait for the row lock: " + call.handle((v, e) -> e != null ? e : v).join());
            }
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*) " + running)) {
                rs.next();
                if (rs.getInt(1) > 0) {
                    return serverNow(s);
                }
            }
            Thread.sleep(5); // a poll of the server's state, not a guess at timing
        }
        throw new AssertionError("the call never reached the server");
    }

    private static void awaitServerTimePast(Statement s, Instant t) throws Exception {
        while (serverNow(s).isBefore(t)) {
            Thread.sleep(20);
        }
    }

    private static Instant serverNow(Statement s) throws Exception {
        try (ResultSet rs = s.executeQuery("SELECT UTC_TIMESTAMP(6)")) {
            rs.next();
            return rs.getObject(1, LocalDateTime.class).toInstant(ZoneOffset.UTC);
        }
    }

    @Test
    void aMissingTableIsReportedWithAHint() {
        BlockingBackend backend = BlockingBackend.of(backendOn(TableSettings.of(server().ds).withSchema(server().db.name())
                .withTable("no_such_table")));
        assertThatThrownBy(() -> backend.tryAcquire(LockKey.of("k"), LockId.random(), TTL)).isInstanceOfSatisfying(FenceGuardException.class,
                e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("1146").contains("FenceGuardMigrations").contains("`no_such_table`")
                            .contains("`fence_guard_lock_floors`");
                });
    }

    @Test
    void aLockTableMadeByHandWithoutItsFloorTableNamesTheFloorTable() {
        // A lock table made before the floor table existed (the first migration's shape, by hand) in a database of its
        // own: a DENSE acquisition of a new key reads the floor, so it fails, and the hint must name the missing table.
        try (TestMariaDb.Database bare = TestMariaDb.server().newDatabase("nofloor")) {
            bare.execute("CREATE TABLE `" + bare.name() + "`.`locks` (lock_key VARBINARY(512) NOT NULL PRIMARY KEY, "
                    + "fence BIGINT NOT NULL, lock_id CHAR(22) CHARACTER SET ascii COLLATE ascii_bin NULL, "
                    + "expires_at DATETIME(6) NULL, acquired_at DATETIME(6) NULL) ENGINE=InnoDB");
            TableSettings settings = TableSettings.of(server().ds).withSchema(bare.name()).withTable("locks");
            BlockingBackend dense = BlockingBackend.of(backendOn(settings));
            assertThatThrownBy(() -> dense.tryAcquire(LockKey.of("k"), LockId.random(), TTL)).isInstanceOfSatisfying(
                    FenceGuardException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                        assertThat(e.getMessage()).contains("`" + bare.name() + "`.`fence_guard_lock_floors`")
                                .contains("second migration");
                    });
            assertThat(bare.query("SELECT COUNT(*) FROM `" + bare.name() + "`.`locks`")).as("nothing written").containsExactly("0");
            BlockingBackend floored = BlockingBackend.of(backendOn(settings.withFenceStrategy(FenceStrategy.CLOCK_FLOORED)));
            assertThat(floored.tryAcquire(LockKey.of("k"), LockId.random(), TTL)).as("CLOCK_FLOORED fences read no floor")
                    .isPresent();
        }
    }
}
