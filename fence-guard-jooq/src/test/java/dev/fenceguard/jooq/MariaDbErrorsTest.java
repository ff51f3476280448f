package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.MySqlErrors;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** MariaDB's own errors, raised by the real server, as fence-guard reports them. */
class MariaDbErrorsTest {

    private static final MariaTestSupport MARIA = new MariaTestSupport("errors");
    private static final String SECRET = "secret-value-7c1f";

    @AfterAll
    static void dropDatabase() {
        MARIA.close();
    }

    private static SQLException raised(String... sql) {
        try (Connection c = MARIA.ds.getConnection(); Statement s = c.createStatement()) {
            for (String q : sql) {
                s.execute(q);
            }
        } catch (SQLException e) {
            return e;
        }
        throw new AssertionError("no error from " + String.join("; ", sql));
    }

    @Test
    void aDuplicateKeyIsMappedByCodeWithoutTheValueItQuotes() throws Exception {
        MARIA.exec("CREATE TABLE " + MARIA.q("dup") + " (k VARCHAR(40) PRIMARY KEY)");
        MARIA.exec("INSERT INTO " + MARIA.q("dup") + " VALUES ('" + SECRET + "')");
        SQLException e = raised("INSERT INTO " + MARIA.q("dup") + " VALUES ('" + SECRET + "')");
        assertThat(e.getMessage()).as("the server quotes the value").contains(SECRET);
        FenceGuardException mapped = MySqlErrors.map(e, "k", "fenced upsert");
        assertThat(mapped.code()).isEqualTo(ErrorCode.INTERNAL);
        assertThat(mapped.getMessage()).contains("SQLSTATE 23000, error 1062").contains("withheld").doesNotContain(SECRET);
        assertThat(mapped.getCause().getMessage()).doesNotContain(SECRET);
    }

    @Test
    void aMissingTableIsInvalidArgumentWithAHintAndAMissingValueNamesItsColumn() throws Exception {
        FenceGuardException missing = MySqlErrors.map(raised("SELECT * FROM " + MARIA.q("nope")), "k", "acquire");
        assertThat(missing.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
        assertThat(missing.getMessage()).contains("error 1146").contains("FenceGuardMigrations");
        MARIA.exec("CREATE TABLE " + MARIA.q("req") + " (id INT PRIMARY KEY, name VARCHAR(10) NOT NULL)");
        SQLException noDefault = raised("INSERT INTO " + MARIA.q("req") + " (id) VALUES (1)");
        assertThat(MySqlErrors.column(noDefault)).contains("name");
        assertThat(MySqlErrors.rowRefused(noDefault)).isTrue();
        SQLException isNull = raised("INSERT INTO " + MARIA.q("req") + " (id, name) VALUES (1, NULL)");
        assertThat(MySqlErrors.column(isNull)).contains("name");
    }

    @Test
    void aTriggersSignalTextStaysOutOfExceptionsWhateverCodesItChose() throws Exception {
        // A SIGNAL sets SQLSTATE, vendor code and text as it likes: here access denied (1142, class 42),
        // the form once kept for its message, quoting the row the trigger refused.
        String marker = "marker-" + LockId.random().value();
        MARIA.exec("CREATE TABLE " + MARIA.q("accounts") + " (id BIGINT PRIMARY KEY, owner VARCHAR(80), fence_token BIGINT NOT NULL DEFAULT 0)");
        MARIA.exec("INSERT INTO " + MARIA.q("accounts") + " (id, owner) VALUES (1, 'ann')");
        MARIA.exec("CREATE TRIGGER " + MARIA.q("no_owner_change") + " BEFORE UPDATE ON " + MARIA.q("accounts") + " FOR EACH ROW "
                + "BEGIN DECLARE m VARCHAR(255) DEFAULT CONCAT('owner ', NEW.owner, ' may not replace ', OLD.owner); "
                + "SIGNAL SQLSTATE '42000' SET MESSAGE_TEXT = m, MYSQL_ERRNO = 1142; END");
        FencedTable accounts = FencedTable.builder(MARIA.db.name(), "accounts", "id", "fence_token").withKeyType(Long.class)
                .withMetrics(LockMetrics.none()).build();

        Throwable write = org.assertj.core.api.Assertions.catchThrowable(
                () -> accounts.on(MARIA.ds).update(1L, dev.fenceguard.core.FenceToken.of(5), Assignments.of("owner", marker)));

        assertThat(write).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.AUTH);
            assertThat(e.getMessage()).contains("SQLSTATE 42000, error 1142").contains("withheld");
        });
        assertThat(dev.fenceguard.testkit.Printed.everything(write)).doesNotContain(marker).doesNotContain("may not replace");

        // The same on the lock table, quoting the lock id, with a vendor code that once kept the column it named.
        LockBackend backend = MARIA.mariaDbBackend("guarded_by_trigger");
        MARIA.exec("CREATE TRIGGER " + MARIA.q("no_renewals") + " BEFORE UPDATE ON " + MARIA.q("guarded_by_trigger") + " FOR EACH ROW "
                + "BEGIN DECLARE m VARCHAR(255) DEFAULT CONCAT('lock ', NEW.lock_id, ' may not be renewed'); "
                + "IF OLD.lock_id IS NOT NULL AND NEW.lock_id = OLD.lock_id THEN SIGNAL SQLSTATE '42000' SET MESSAGE_TEXT = m, "
                + "MYSQL_ERRNO = 1142; END IF; END");
        var blocking = dev.fenceguard.testkit.BlockingBackend.of(backend);
        LockKey key = LockKey.of("orders:trigger");
        LockId id = LockId.random();
        blocking.tryAcquire(key, id, Duration.ofSeconds(30)).orElseThrow();
        Throwable extend = org.assertj.core.api.Assertions.catchThrowable(() -> blocking.extend(key, id, Duration.ofSeconds(30)));
        assertThat(extend).isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.AUTH));
        assertThat(dev.fenceguard.testkit.Printed.everything(extend)).doesNotContain(id.value()).doesNotContain("may not be renewed");
        assertThat(blocking.release(key, id)).isTrue();
    }

    @Test
    void aColumnIsReadOnlyFromTheServersOwnNotNullRefusals() {
        SQLException signalled = raised("SIGNAL SQLSTATE '23000' SET MESSAGE_TEXT = \"Column 'secret' cannot be null\", MYSQL_ERRNO = 1644");
        assertThat(MySqlErrors.column(signalled)).isEmpty();
        assertThat(MySqlErrors.map(signalled, "k", "fenced update").getMessage()).doesNotContain("secret");
    }

    @Test
    void aRowLockHeldElsewhereCannotHoldACallPastItsTimeout() throws Exception {
        LockBackend backend = MARIA.mariaDbBackend("locks");
        LockKey key = LockKey.of("held-row");
        backend.tryAcquire(key, LockId.random(), Duration.ofMillis(1), Duration.ofSeconds(5)).toCompletableFuture().get(10, TimeUnit.SECONDS);
        try (Connection holder = MARIA.ds.getConnection(); Statement s = holder.createStatement()) {
            holder.setAutoCommit(false);
            s.execute("SELECT * FROM " + MARIA.q("locks") + " FOR UPDATE");
            // The row is locked by an open transaction: the acquire waits for it until max_statement_time ends it.
            assertThatThrownBy(() -> backend.tryAcquire(key, LockId.random(), Duration.ofSeconds(2), Duration.ofMillis(1200))
                    .toCompletableFuture().join())
                    .isInstanceOf(CompletionException.class).cause().isInstanceOfSatisfying(FenceGuardException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT));
            holder.rollback();
        }
        // The server gave up (max_statement_time) and answered TIMEOUT, so nothing was granted; had it granted
        // (the holder ending just as the call gave up), the grant would expire after its 2 s: the key is had again.
        LockClient client = LockClient.builder(backend).withMetrics(LockMetrics.none()).build();
        assertThat(client.acquire(key.value(), Duration.ofSeconds(5), Duration.ofSeconds(10))).as("free once the holder's transaction ended")
                .isPresent();
    }
}
