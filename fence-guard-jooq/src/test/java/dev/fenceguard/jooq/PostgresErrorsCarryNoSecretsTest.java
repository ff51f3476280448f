package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockListener;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.LockBackends;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.Printed;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * pgjdbc puts the server's DETAIL into its messages, and for a constraint violation that is the whole
 * row, lock id included. None of it may reach fence-guard's exceptions, their printed cause chains, or
 * the log.
 */
class PostgresErrorsCarryNoSecretsTest {

    private static final String TABLE = "guarded";
    private static PgTestSupport pg;

    @BeforeAll
    static void setUp() throws SQLException {
        pg = new PgTestSupport("pgsecrets");
        pg.lockBackend(TABLE); // migrates the lock table
        // A user's own rule on the lock table that a renewal breaks: a lease may not outlive its first TTL
        // (1.5 s below) by more than 100 ms.
        pg.exec("ALTER TABLE " + pg.q(TABLE) + " ADD CONSTRAINT no_long_leases CHECK "
                + "(expires_at IS NULL OR expires_at <= acquired_at + interval '1600 milliseconds')");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    @Test
    void theDriverWouldHaveQuotedTheLockId() throws SQLException {
        // Why this matters: the same violation through plain JDBC carries the whole row.
        String lockId = LockId.random().value();
        try (Connection c = pg.ds.getConnection();
                PreparedStatement ps = c.prepareStatement("INSERT INTO " + pg.q(TABLE)
                        + " (lock_key, fence, lock_id, expires_at, acquired_at) VALUES ('raw', 1, ?, now() + interval '1 hour', now())")) {
            ps.setString(1, lockId);
            assertThat(catchThrowable(ps::executeUpdate)).hasMessageContaining(lockId);
        }
    }

    @Test
    void aConstraintViolationOnExtendNamesTheConstraintButNotTheRow() {
        BlockingBackend backend = BlockingBackend.of(LockBackends.postgres(pg.ds, pg.schema.name(), TABLE));
        LockKey key = LockKey.of("orders:direct");
        LockId id = LockId.random();
        backend.tryAcquire(key, id, Duration.ofMillis(1500)).orElseThrow();

        Throwable thrown = catchThrowable(() -> backend.extend(key, id, Duration.ofSeconds(10)));

        assertThat(thrown).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL);
            assertThat(e.getMessage()).contains("extend").contains("SQLSTATE 23514").contains("no_long_leases")
                    .contains(pg.schema.name() + "." + TABLE).contains("orders:direct");
            assertThat(e.getCause()).isInstanceOfSatisfying(SQLException.class, cause -> {
                assertThat(cause.getSQLState()).isEqualTo("23514");
                assertThat(cause.getMessage()).contains("org.postgresql.util.PSQLException");
                assertThat(cause.getStackTrace()).isNotEmpty();
            });
        });
        assertThat(Printed.everything(thrown)).doesNotContain(id.value()).doesNotContain("Failing row");
        backend.release(key, id);
    }

    @Test
    void aRenewalThatViolatesAConstraintLeaksNoLockIdToLogsOrListeners() throws Exception {
        LockBackend backend = LockBackends.postgres(pg.ds, pg.schema.name(), TABLE);
        Renewals r = renewUntilLost(backend, "orders:renewed");

        assertThat(r.logs).as("the WARN lines were captured").contains("renewing lock 'orders:renewed'")
                .contains("SQLSTATE 23514").contains("no_long_leases").contains("lost lock 'orders:renewed'");
        r.assertNowhere(r.lockId);
        r.assertNowhere("Failing row");
    }

    @Test
    void aTriggersMessageOnTheLockTableStaysOutOfExceptionsAndWarnLinesWhateverItsSqlstate() throws Exception {
        // A user's trigger on the lock table that refuses renewals, quoting the row (the lock id) in its
        // message, with the SQLSTATE of insufficient_privilege: class 42 once counted as naming objects only.
        String table = "guarded_by_trigger";
        pg.lockBackend(table); // migrates the lock table
        pg.exec("CREATE FUNCTION " + pg.q("no_renewals") + "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                + "IF OLD.lock_id IS NOT NULL AND NEW.lock_id = OLD.lock_id THEN "
                + "RAISE EXCEPTION 'lock % of % may not be renewed', NEW.lock_id, NEW.lock_key USING ERRCODE = '42501'; END IF; "
                + "RETURN NEW; END $$");
        pg.exec("CREATE TRIGGER no_renewals BEFORE UPDATE ON " + pg.q(table) + " FOR EACH ROW EXECUTE FUNCTION " + pg.q("no_renewals") + "()");
        LockBackend backend = LockBackends.postgres(pg.ds, pg.schema.name(), table);

        BlockingBackend blocking = BlockingBackend.of(backend);
        LockKey key = LockKey.of("orders:trigger");
        LockId id = LockId.random();
        blocking.tryAcquire(key, id, Duration.ofSeconds(30)).orElseThrow();
        Throwable thrown = catchThrowable(() -> blocking.extend(key, id, Duration.ofSeconds(30)));
        assertThat(thrown).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.AUTH);
            assertThat(e.getMessage()).contains("extend").contains("SQLSTATE 42501").contains("withheld");
        });
        assertThat(Printed.everything(thrown)).doesNotContain(id.value()).doesNotContain("may not be renewed");
        assertThat(blocking.release(key, id)).isTrue();

        Renewals r = renewUntilLost(backend, "orders:trigger-renewed");
        assertThat(r.logs).as("the WARN lines were captured").contains("renewing lock 'orders:trigger-renewed'")
                .contains("SQLSTATE 42501").contains("lost lock 'orders:trigger-renewed'");
        r.assertNowhere(r.lockId);
        r.assertNowhere("may not be renewed");
    }

    @Test
    void aTriggersMessageOnAFencedWriteStaysOutOfTheException() throws Exception {
        String marker = "marker-" + LockId.random().value();
        pg.exec("CREATE TABLE " + pg.q("accounts") + " (id BIGINT PRIMARY KEY, owner TEXT, fence_token BIGINT NOT NULL DEFAULT 0)");
        pg.exec("INSERT INTO " + pg.q("accounts") + " (id, owner) VALUES (1, 'ann')");
        pg.exec("CREATE FUNCTION " + pg.q("no_owner_change") + "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                + "RAISE EXCEPTION 'owner % may not replace %', NEW.owner, OLD.owner USING ERRCODE = '42501'; END $$");
        pg.exec("CREATE TRIGGER no_owner_change BEFORE UPDATE ON " + pg.q("accounts") + " FOR EACH ROW EXECUTE FUNCTION "
                + pg.q("no_owner_change") + "()");
        FencedTable accounts = FencedTable.builder(pg.schema.name(), "accounts", "id", "fence_token").withKeyType(Long.class)
                .withMetrics(LockMetrics.none()).build();

        Throwable thrown = catchThrowable(() -> accounts.on(pg.ds).update(1L, FenceToken.of(5), Assignments.of("owner", marker)));

        assertThat(thrown).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.AUTH);
            assertThat(e.getMessage()).contains("fenced update failed: SQLSTATE 42501").contains("withheld");
        });
        assertThat(Printed.everything(thrown)).doesNotContain(marker).doesNotContain("may not replace");
        assertThat(pg.one("SELECT owner || ':' || fence_token FROM " + pg.q("accounts"))).isEqualTo("ann:0");
    }

    /** What a lease's renewals left behind while every renewal failed until the lease was lost. */
    private record Renewals(String lockId, String logs, List<Throwable> reported) {
        void assertNowhere(String secret) {
            assertThat(logs).as("log lines").doesNotContain(secret);
            for (Throwable t : reported) {
                assertThat(Printed.everything(t)).as("messages and printed stack trace of %s", t.getClass()).doesNotContain(secret);
            }
        }
    }

    /** Holds {@code key} under {@code backend} with a 1.5 s TTL until the client reports the lease lost; every renewal must fail. */
    private static Renewals renewUntilLost(LockBackend backend, String key) throws Exception {
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        CountDownLatch lost = new CountDownLatch(1);
        LockClient client = LockClient.builder(backend).withMetrics(LockMetrics.none()).onEvents(new LockListener() {
            @Override
            public void onRenewFailed(Lease lease, Throwable error) {
                reported.add(error);
            }

            @Override
            public void onLeaseLost(Lease lease, Throwable cause) {
                if (cause != null) {
                    reported.add(cause);
                }
                lost.countDown();
            }
        }).build();
        AtomicReference<String> lockId = new AtomicReference<>();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream original = System.err;
        System.setErr(new PrintStream(new TeeStream(original, err), true, StandardCharsets.UTF_8));
        Throwable fromWithLock;
        try {
            fromWithLock = catchThrowable(() -> client.withLock(key, Duration.ofMillis(1500), Duration.ZERO, lease -> {
                lockId.set(lease.lockId().value());
                // Every renewal fails; the lease runs out and is reported lost.
                assertThat(lost.await(30, TimeUnit.SECONDS)).as("lease reported lost").isTrue();
                return "done";
            }));
        } finally {
            System.setErr(original);
        }
        assertThat(fromWithLock).isNull();
        assertThat(reported).isNotEmpty();
        assertThat(lockId.get()).isNotNull();
        return new Renewals(lockId.get(), err.toString(StandardCharsets.UTF_8), reported);
    }

    /** Writes to the real stream and to a capture, so a failing run still shows its log. */
    private static final class TeeStream extends java.io.OutputStream {
        private final java.io.OutputStream a;
        private final java.io.OutputStream b;

        TeeStream(java.io.OutputStream a, java.io.OutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public synchronized void write(int c) throws java.io.IOException {
            a.write(c);
            b.write(c);
        }

        @Override
        public synchronized void write(byte[] buf, int off, int len) throws java.io.IOException {
            a.write(buf, off, len);
            b.write(buf, off, len);
        }

        @Override
        public void flush() throws java.io.IOException {
            a.flush();
            b.flush();
        }
    }
}
