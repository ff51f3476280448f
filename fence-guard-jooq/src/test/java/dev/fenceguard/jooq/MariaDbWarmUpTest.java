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
import dev.fenceguard.core.WriteOutcome.NotFound;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.testing.CountingStatements;
import dev.fenceguard.jdbc.testing.LockBackends;
import dev.fenceguard.jdbc.testing.MariaTestSupport;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code warmUp()} of the MariaDB and MySQL lock backends and of fenced writers on MariaDB, through MariaDB
 * Connector/J (found rows), MySQL Connector/J (found rows) and MariaDB Connector/J with changed rows.
 */
class MariaDbWarmUpTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static MariaTestSupport maria;
    private static MariaTestSupport connectorJ;
    private static MariaTestSupport changedRows;

    @BeforeAll
    static void setUp() throws Exception {
        maria = new MariaTestSupport("mwarm");
        connectorJ = new MariaTestSupport("mwarm_cj", "mysql", "");
        changedRows = new MariaTestSupport("mwarm_chg", "mariadb", "useAffectedRows=true");
        for (MariaTestSupport db : List.of(maria, connectorJ, changedRows)) {
            db.exec("CREATE TABLE " + db.q("orders") + " (id BIGINT PRIMARY KEY, status VARCHAR(40) NOT NULL DEFAULT 'new', "
                    + "fence_token BIGINT NOT NULL DEFAULT 0, fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
            db.exec("INSERT INTO " + db.q("orders") + " (id, status, fence_token) VALUES (1, 'new', 5), (2, 'paid', 0)");
        }
    }

    @AfterAll
    static void tearDown() {
        maria.close();
        connectorJ.close();
        changedRows.close();
    }

    private static LockClient client(LockBackend backend) {
        return LockClient.builder(backend).withMetrics(LockMetrics.none()).build();
    }

    private static FencedTable orders(MariaTestSupport db) {
        return FencedTable.builder(db.db.name(), "orders", "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").withMetrics(LockMetrics.none()).build();
    }

    private static void warmUpThreeTimesThenAcquire(MariaTestSupport db, LockBackend backend, String table) {
        LockClient client = client(backend);
        client.warmUp();
        client.warmUp();
        client.async().warmUp().toCompletableFuture().join();
        assertThat(db.rows("SELECT HEX(lock_key) FROM " + db.q(table))).as("rows in the lock table after three warm-ups").isEmpty();
        try (Lease lease = client.tryAcquire("orders:1", TTL).orElseThrow()) {
            assertThat(lease.fence().value()).as("the first real acquisition after warm-ups").isEqualTo(1);
        }
    }

    @Test
    void mariaDbBackendWarmUpIsIdempotentTakesNoLockAndConsumesNoFence() {
        warmUpThreeTimesThenAcquire(maria, maria.mariaDbBackend("warm_locks"), "warm_locks");
        warmUpThreeTimesThenAcquire(connectorJ, connectorJ.mariaDbBackend("warm_locks"), "warm_locks");
    }

    @Test
    void mySqlBackendWarmUpIsIdempotentTakesNoLockAndConsumesNoFence() {
        warmUpThreeTimesThenAcquire(connectorJ, connectorJ.mySqlBackend("warm_locks_my"), "warm_locks_my");
        warmUpThreeTimesThenAcquire(changedRows, changedRows.mySqlBackend("warm_locks_my"), "warm_locks_my");
        warmUpThreeTimesThenAcquire(maria, maria.mySqlBackend("warm_locks_my"), "warm_locks_my");
    }

    @Test
    void backendWarmUpFailsOnAMissingLockTable() {
        for (LockBackend backend : List.of(LockBackends.mariaDb(maria.ds, maria.db.name(), "no_lock_table"),
                LockBackends.mySql(connectorJ.ds, connectorJ.db.name(), "no_lock_table"))) {
            assertThatThrownBy(client(backend)::warmUp).as(backend.name()).isInstanceOfSatisfying(FenceGuardException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                assertThat(e.key()).as("a warm-up concerns no key").isEmpty();
                assertThat(e.getMessage()).contains("warm-up").contains("1146");
            });
        }
    }

    @Test
    void writerWarmUpChangesNoRowAndLeavesWritesWorking() {
        for (MariaTestSupport db : List.of(maria, connectorJ, changedRows)) {
            List<String> before = db.rows("SELECT * FROM " + db.q("orders") + " ORDER BY id");
            FencedTable orders = orders(db);
            AtomicInteger statements = new AtomicInteger();
            FencedWriter writer = orders.on(CountingStatements.of(db.ds, statements));
            writer.warmUp(Assignments.of("status", "example"));
            assertThat(statements).as("statements of a warm-up of one column set").hasPositiveValue();
            writer.warmUp(Assignments.of("status", "example"), Assignments.of("status", null));
            writer.warmUp();
            orders.on(DSL.using(db.ds, SQLDialect.MARIADB)).warmUp(Assignments.of("status", "example"));
            assertThat(db.rows("SELECT * FROM " + db.q("orders") + " ORDER BY id")).as("rows after warm-ups of three writers")
                    .isEqualTo(before);
            assertThat(writer.update(1L, FenceToken.of(5), Assignments.of("status", "paid"))).isInstanceOf(Applied.class);
            assertThat(writer.delete(7L, FenceToken.of(5))).isInstanceOf(Applied.class);
            assertThat(writer.claim(7L, FenceToken.of(6))).isInstanceOf(NotFound.class);
            assertThat(db.one("SELECT CONCAT_WS('|', status, fence_token) FROM " + db.q("orders") + " WHERE id = 1")).isEqualTo("paid|5");
            assertThat(db.one("SELECT CONCAT_WS('|', fence_token, fence_deleted) FROM " + db.q("orders") + " WHERE id = 7")).isEqualTo("6|1");
        }
    }

    @Test
    void writerWarmUpInsideATransactionLeavesItUsable() throws Exception {
        try (Connection c = maria.ds.getConnection()) {
            c.setAutoCommit(false);
            orders(maria).on(c).warmUp(Assignments.of("status", "example"));
            assertThat(orders(maria).on(c).claim(2L, FenceToken.of(3))).as("a write after the warm-up, same transaction")
                    .isInstanceOf(Applied.class);
            c.rollback();
        }
        assertThat(maria.one("SELECT fence_token FROM " + maria.q("orders") + " WHERE id = 2")).isEqualTo("0");
    }

    @Test
    void writerWarmUpChecksColumnsBeforeAnySqlAndTheTableOnTheServer() {
        for (MariaTestSupport db : List.of(maria, connectorJ)) {
            AtomicInteger statements = new AtomicInteger();
            FencedWriter counted = orders(db).on(CountingStatements.of(db.ds, statements));
            assertThatThrownBy(() -> counted.warmUp(Assignments.of("fence_token", 1))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("fence-guard sets those itself");
            assertThat(statements).as("statements sent for an invalid warm-up").hasValue(0);
            // A column the table does not have: the update of that column set, run for real on no row, fails.
            assertThatThrownBy(() -> counted.warmUp(Assignments.of("no_such_column", "x")))
                    .isInstanceOfSatisfying(FenceGuardException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                        assertThat(e.getMessage()).contains("1054");
                    });
            FencedWriter noTable = FencedTable.builder(db.db.name(), "no_table", "id", "fence_token").withMetrics(LockMetrics.none())
                    .build().on(db.ds);
            assertThatThrownBy(noTable::warmUp).isInstanceOfSatisfying(FenceGuardException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
        }
    }
}
