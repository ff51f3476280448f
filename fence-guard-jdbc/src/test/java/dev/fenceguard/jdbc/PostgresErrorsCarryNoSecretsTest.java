package dev.fenceguard.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockListener;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.Lease;
import dev.fenceguard.testkit.BlockingBackend;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
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
        pg.backend(TABLE);
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
        BlockingBackend backend = BlockingBackend.of(PostgresLockBackend.builder(pg.ds).withSchema(pg.schema.name()).withTable(TABLE).build());
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
        assertThat(printed(thrown)).doesNotContain(id.value()).doesNotContain("Failing row");
        backend.release(key, id);
    }

    @Test
    void aRenewalThatViolatesAConstraintLeaksNoLockIdToLogsOrListeners() throws Exception {
        PostgresLockBackend backend = PostgresLockBackend.builder(pg.ds).withSchema(pg.schema.name()).withTable(TABLE).build();
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
            fromWithLock = catchThrowable(() -> client.withLock("orders:renewed", Duration.ofMillis(1500), Duration.ZERO, lease -> {
                lockId.set(lease.lockId().value());
                // Every renewal breaks the constraint; the lease runs out and is reported lost.
                assertThat(lost.await(30, TimeUnit.SECONDS)).as("lease reported lost").isTrue();
                return "done";
            }));
        } finally {
            System.setErr(original);
        }
        String logs = err.toString(StandardCharsets.UTF_8);

        assertThat(fromWithLock).isNull();
        assertThat(reported).isNotEmpty();
        assertThat(logs).as("the WARN lines were captured").contains("renewing lock 'orders:renewed'")
                .contains("SQLSTATE 23514").contains("no_long_leases").contains("lost lock 'orders:renewed'");
        assertThat(lockId.get()).isNotNull();
        assertThat(logs).doesNotContain(lockId.get()).doesNotContain("Failing row");
        for (Throwable t : reported) {
            assertThat(printed(t)).as("printed stack trace of %s", t.getClass()).doesNotContain(lockId.get())
                    .doesNotContain("Failing row");
        }
    }

    private static String printed(Throwable t) {
        StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        return out.toString();
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
