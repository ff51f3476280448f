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
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.BlockingBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
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

    /** A backend on a table that does not exist. */
    abstract LockBackend backendWithoutTable();

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
        long before = FenceStrategy.floorAt(Instant.now().minusSeconds(60).toEpochMilli());
        long after = FenceStrategy.floorAt(Instant.now().plusSeconds(60).toEpochMilli());
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
    void aMissingTableIsReportedWithAHint() {
        BlockingBackend backend = BlockingBackend.of(backendWithoutTable());
        assertThatThrownBy(() -> backend.tryAcquire(LockKey.of("k"), LockId.random(), TTL)).isInstanceOfSatisfying(FenceGuardException.class,
                e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("1146").contains("FenceGuardMigrations");
                });
    }
}
