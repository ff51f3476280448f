package dev.fenceguard.jooq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome.Applied;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.LockBackends;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** {@code warmUp()} of the PostgreSQL lock backend and of fenced writers, on a real server. */
class PostgresWarmUpTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static PgTestSupport pg;

    @BeforeAll
    static void setUp() throws Exception {
        pg = new PgTestSupport("pgwarm");
        pg.exec("CREATE TABLE " + pg.q("orders") + " (id BIGINT PRIMARY KEY, status TEXT NOT NULL DEFAULT 'new', "
                + "fence_token BIGINT NOT NULL DEFAULT 0, fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        pg.exec("INSERT INTO " + pg.q("orders") + " (id, status, fence_token) VALUES (1, 'new', 5), (2, 'paid', 0)");
    }

    @AfterAll
    static void tearDown() {
        pg.close();
    }

    private static LockClient client(LockBackend backend) {
        return LockClient.builder(backend).withMetrics(LockMetrics.none()).build();
    }

    private static FencedTable orders() {
        return FencedTable.builder(pg.schema.name(), "orders", "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").withMetrics(LockMetrics.none()).build();
    }

    private static PGSimpleDataSource nowhere() {
        PGSimpleDataSource nowhere = new PGSimpleDataSource();
        nowhere.setURL("jdbc:postgresql://127.0.0.1:1/test?user=postgres&connectTimeout=2");
        return nowhere;
    }

    @Test
    void backendWarmUpIsIdempotentTakesNoLockAndConsumesNoFence() {
        LockClient client = client(pg.lockBackend("warm_locks"));
        client.warmUp();
        client.warmUp();
        client.async().warmUp().toCompletableFuture().join();
        assertThat(pg.rows("SELECT * FROM " + pg.q("warm_locks"))).as("rows in the lock table after three warm-ups").isEmpty();
        try (Lease lease = client.tryAcquire("orders:1", TTL).orElseThrow()) {
            assertThat(lease.fence().value()).as("the first real acquisition after warm-ups").isEqualTo(1);
        }
    }

    @Test
    void backendWarmUpFailsOnAMissingLockTable() {
        LockClient client = client(LockBackends.postgres(pg.ds, pg.schema.name(), "no_lock_table"));
        assertThatThrownBy(client::warmUp).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
            assertThat(e.key()).as("a warm-up concerns no key").isEmpty();
            assertThat(e.getMessage()).contains("warm-up").contains("42P01");
        });
    }

    @Test
    void backendWarmUpOnAServerThatIsDownIsUnavailable() {
        LockClient client = client(LockBackends.postgres(nowhere(), "public", "fence_guard_locks"));
        assertThatThrownBy(client::warmUp).isInstanceOfSatisfying(FenceGuardException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE));
        assertThatThrownBy(() -> client.async().warmUp().toCompletableFuture().join()).isInstanceOf(CompletionException.class)
                .cause().isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE));
    }

    @Test
    void writerWarmUpChangesNoRowAndLeavesWritesWorking() {
        List<String> before = pg.rows("SELECT * FROM " + pg.q("orders") + " ORDER BY id");
        FencedTable orders = orders();
        FencedWriter writer = orders.on(pg.ds);
        writer.warmUp(Assignments.of("status", "example"));
        writer.warmUp(Assignments.of("status", "example"), Assignments.of("status", null));
        writer.warmUp();
        orders.on(DSL.using(pg.ds, SQLDialect.POSTGRES)).warmUp(Assignments.of("status", "example"));
        assertThat(pg.rows("SELECT * FROM " + pg.q("orders") + " ORDER BY id")).as("rows after warm-ups of three writers").isEqualTo(before);
        assertThat(writer.update(1L, FenceToken.of(5), Assignments.of("status", "paid"))).isInstanceOf(Applied.class);
        assertThat(pg.one("SELECT status, fence_token FROM " + pg.q("orders") + " WHERE id = 1")).isEqualTo("paid|5");
    }

    @Test
    void writerWarmUpInsideATransactionLeavesItUsable() throws Exception {
        try (Connection c = pg.ds.getConnection()) {
            c.setAutoCommit(false);
            orders().on(c).warmUp(Assignments.of("status", "example"));
            assertThat(orders().on(c).claim(2L, FenceToken.of(3))).as("a write after the warm-up, same transaction")
                    .isInstanceOf(Applied.class);
            c.rollback();
        }
        assertThat(pg.one("SELECT fence_token FROM " + pg.q("orders") + " WHERE id = 2")).isEqualTo("0");
    }

    @Test
    void writerWarmUpChecksColumnsBeforeAnySqlAndTheTableOnTheServer() {
        AtomicInteger statements = new AtomicInteger();
        FencedWriter counted = orders().on(pg.counting(statements));
        // Tried: an example assignment that sets the fence column, which fence-guard sets itself.
        assertThatThrownBy(() -> counted.warmUp(Assignments.of("fence_token", 1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fence-guard sets those itself");
        assertThat(statements).as("statements sent for an invalid warm-up").hasValue(0);
        // Tried: a column the table does not have; the server refuses to describe the statement.
        assertThatThrownBy(() -> counted.warmUp(Assignments.of("no_such_column", "x")))
                .isInstanceOfSatisfying(FenceGuardException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("42703");
                });
    }

    @Test
    void writerWarmUpOnAServerThatIsDownIsUnavailable() {
        assertThatThrownBy(() -> orders().on(nowhere()).warmUp()).isInstanceOfSatisfying(FenceGuardException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE));
    }
}
