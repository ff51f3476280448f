package dev.fenceguard.spring.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.testkit.servers.TestMariaDb;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Fenced writes inside Spring transactions on the test MariaDB, through both drivers: the statements are
 * MariaDB's, not PostgreSQL's (which the server refused as a syntax error).
 */
class TransactionalFencedWritesMariaDbTest {

    static TestMariaDb.Database db;

    @BeforeAll
    static void setUp() {
        db = TestMariaDb.server().newDatabase("springtx");
    }

    @AfterAll
    static void tearDown() {
        db.close();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"mariadb", "mysql"})
    void updateClaimAndDeleteJoinTheTransactionAppliedOrStaleAndARollbackDiscardsThem(String driver) {
        String table = "orders_" + driver;
        db.execute("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, status VARCHAR(40) NOT NULL DEFAULT 'none',"
                + " fence_token BIGINT NOT NULL DEFAULT 0, fence_deleted BOOLEAN NOT NULL DEFAULT FALSE)");
        db.execute("INSERT INTO " + table + " (id, status) VALUES (1, 'new')");
        FencedTable orders = FencedTable.builder(db.name(), table, "id", "fence_token").withKeyType(Long.class)
                .withTombstoneColumn("fence_deleted").withMetrics(LockMetrics.none()).build();
        try (HikariDataSource pool = new HikariDataSource()) {
            pool.setJdbcUrl(db.jdbcUrl(driver, ""));
            pool.setMaximumPoolSize(1); // the write must run on the transaction's connection: there is no other
            TransactionalFencedWrites writes = TransactionalFencedWrites.of(pool);
            TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(pool));
            String rows = "SELECT id, status, fence_token, fence_deleted FROM " + table + " ORDER BY id";

            transaction.executeWithoutResult(status -> {
                assertThat(writes.on(orders).update(1L, FenceToken.of(5), Assignments.of("status", "paid")))
                        .isInstanceOf(WriteOutcome.Applied.class);
                assertThat(writes.on(orders).update(1L, FenceToken.of(4), Assignments.of("status", "zombie")))
                        .isInstanceOfSatisfying(WriteOutcome.Stale.class, s -> assertThat(s.currentFence()).isEqualTo(5));
                assertThat(writes.on(orders).claim(1L, FenceToken.of(6))).isInstanceOf(WriteOutcome.Applied.class);
                assertThat(writes.on(orders).delete(2L, FenceToken.of(3))).as("a tombstone for a key never written")
                        .isInstanceOf(WriteOutcome.Applied.class);
                assertThat(db.query(rows)).as("another connection sees nothing before the commit").containsExactly("1|new|0|0");
            });
            assertThat(db.query(rows)).containsExactly("1|paid|6|0", "2|none|3|1");

            transaction.executeWithoutResult(status -> {
                assertThat(writes.on(orders).delete(1L, FenceToken.of(5))).isInstanceOfSatisfying(WriteOutcome.Stale.class,
                        s -> assertThat(s.currentFence()).isEqualTo(6));
                assertThat(writes.on(orders).delete(1L, FenceToken.of(9))).isInstanceOf(WriteOutcome.Applied.class);
                assertThat(writes.on(orders).update(2L, FenceToken.of(9), Assignments.of("status", "back")))
                        .as("a deleted row is not found").isInstanceOf(WriteOutcome.NotFound.class);
                status.setRollbackOnly();
            });
            assertThat(db.query(rows)).as("the rollback discarded the delete and its fence").containsExactly("1|paid|6|0", "2|none|3|1");
            assertThat(writes.on(orders).update(1L, FenceToken.of(7), Assignments.of("status", "shipped")))
                    .as("outside a transaction, a fence below the rolled-back 9 still applies").isInstanceOf(WriteOutcome.Applied.class);
            assertThat(db.query(rows)).containsExactly("1|shipped|7|0", "2|none|3|1");
        }
    }
}
