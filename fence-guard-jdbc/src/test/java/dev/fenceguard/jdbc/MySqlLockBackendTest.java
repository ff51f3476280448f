package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.TableSettings;
import dev.fenceguard.jdbc.testing.CountingStatements;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import dev.fenceguard.testkit.BlockingBackend;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link LockTableBackendTest} for {@link MySqlLockBackend} on the test MariaDB through MySQL Connector/J,
 * with found rows (the driver's default) and with changed rows; and what only this backend does: the
 * answers that come back as insert ids.
 */
class MySqlLockBackendTest extends LockTableBackendTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final MariaTestSupport FOUND = new MariaTestSupport("my_backend", "mysql", "");
    private static final MariaTestSupport CHANGED = new MariaTestSupport("my_backend_ch", "mysql", "useAffectedRows=true");

    @AfterAll
    static void dropDatabases() {
        FOUND.close();
        CHANGED.close();
    }

    @Override
    MariaTestSupport server() {
        return FOUND;
    }

    @Override
    LockBackend backend(String table, FenceStrategy strategy) {
        return new MySqlLockBackend(server().lockTable(table).withFenceStrategy(strategy));
    }

    @Override
    LockBackend backendOn(TableSettings settings) {
        return new MySqlLockBackend(settings);
    }

    @Nested
    class WithChangedRowCounts extends LockTableBackendTest {
        @Override
        MariaTestSupport server() {
            return CHANGED;
        }

        @Override
        LockBackend backend(String table, FenceStrategy strategy) {
            return new MySqlLockBackend(CHANGED.lockTable(table).withFenceStrategy(strategy));
        }

        @Override
        LockBackend backendOn(TableSettings settings) {
            return new MySqlLockBackend(settings);
        }
    }

    @Test
    void aGrantReportsTheExpiryTheServerStored() throws Exception {
        BlockingBackend backend = BlockingBackend.of(backend("stored_expiry", FenceStrategy.DENSE));
        Grant grant = backend.tryAcquire(LockKey.of("k"), LockId.random(), TTL).orElseThrow();
        Instant stored = LocalDateTime.parse(FOUND.one("SELECT expires_at FROM " + FOUND.q("stored_expiry")).replace(' ', 'T'))
                .toInstant(ZoneOffset.UTC);
        assertThat(grant.expiresAt()).isEqualTo(stored);
    }

    @Test
    void anInsertIdLeftOnThePooledConnectionIsNotReadAsAnAnswer() throws Exception {
        // One connection, so every call reuses the session whose LAST_INSERT_ID() this test sets.
        MariaTestSupport one = new MariaTestSupport("my_backend_one", "mysql", "useAffectedRows=true");
        try {
            one.ds.setMaximumPoolSize(1);
            BlockingBackend backend = BlockingBackend.of(new MySqlLockBackend(one.lockTable("locks")));
            LockKey key = LockKey.of("k");
            LockId holder = LockId.random();
            long fence = backend.tryAcquire(key, holder, TTL).orElseThrow().fence();
            setSessionInsertId(one.ds, fence + 1);
            assertThat(backend.tryAcquire(key, LockId.random(), TTL)).as("held, whatever the session's last insert id was").isEmpty();
            setSessionInsertId(one.ds, 1_000_000);
            assertThat(backend.extend(key, LockId.random(), TTL)).as("a stranger's extend").isEmpty();
            assertThat(backend.release(key, holder)).isTrue();
            setSessionInsertId(one.ds, 1_000_000);
            assertThat(backend.extend(key, holder, TTL)).as("an extend after release").isEmpty();
        } finally {
            one.close();
        }
    }

    @Test
    void eachOperationTakesTheDocumentedRoundTripsInSyntaxMySqlHas() throws Exception {
        AtomicInteger statements = new AtomicInteger();
        Queue<String> sql = new ConcurrentLinkedQueue<>();
        FOUND.lockTable("trips"); // migrates the table
        BlockingBackend backend = BlockingBackend.of(new MySqlLockBackend(TableSettings.of(CountingStatements.of(FOUND.ds, statements, sql))
                .withSchema(FOUND.db.name()).withTable("trips")));
        LockKey key = LockKey.of("k");
        LockId holder = LockId.random();
        assertThat(trips(statements, () -> backend.tryAcquire(key, holder, TTL))).as("a grant: the insert and a read of its expiry").isEqualTo(2);
        assertThat(trips(statements, () -> backend.tryAcquire(key, LockId.random(), TTL))).as("a refusal").isEqualTo(1);
        assertThat(trips(statements, () -> backend.extend(key, holder, TTL))).as("an extend").isEqualTo(1);
        assertThat(trips(statements, () -> backend.extend(key, LockId.random(), TTL))).as("a refused extend, then the live check")
                .isEqualTo(2);
        assertThat(trips(statements, () -> backend.lookup(key))).as("a lookup").isEqualTo(1);
        assertThat(trips(statements, () -> backend.release(key, holder))).as("a release").isEqualTo(1);
        // MariaDB-only syntax, syntax MySQL deprecated, and clocks other than the server's time in UTC when the row is written.
        assertThat(sql).isNotEmpty().allSatisfy(text -> assertThat(text.replace(MySqlLockBackend.NOW, "").toUpperCase(Locale.ROOT))
                .doesNotContain("RETURNING", "SET STATEMENT", "VALUES(", ":=", "@", " AS NEW", "NOW(", "SYSDATE", "UNIX_TIMESTAMP"));
    }

    private static int trips(AtomicInteger statements, Callable<?> call) throws Exception {
        int before = statements.get();
        call.call();
        return statements.get() - before;
    }

    private static void setSessionInsertId(DataSource ds, long value) throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("SELECT LAST_INSERT_ID(" + value + ")");
            try (ResultSet rs = s.executeQuery("SELECT LAST_INSERT_ID()")) {
                assertThat(rs.next() ? rs.getLong(1) : 0).as("the pooled session now holds the planted id").isEqualTo(value);
            }
        }
    }
}
