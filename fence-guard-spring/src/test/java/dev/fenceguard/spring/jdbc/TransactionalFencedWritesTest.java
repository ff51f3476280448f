package dev.fenceguard.spring.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.testkit.servers.TestPostgres;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** Fenced writes inside and outside Spring-managed transactions, on the test PostgreSQL. */
class TransactionalFencedWritesTest {

    static TestPostgres.Schema schema;
    static DataSource dataSource;
    static FencedTable orders;
    static TransactionalFencedWrites writes;
    static TransactionTemplate transaction;

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("springtx");
        schema.execute("CREATE TABLE " + schema.name() + ".orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL,"
                + " fence_token BIGINT NOT NULL DEFAULT 0)");
        dataSource = schema.dataSource(); // one instance: Spring binds the transaction's connection to it
        orders = FencedTable.builder(schema.name(), "orders", "id", "fence_token").withKeyType(Long.class).build();
        writes = TransactionalFencedWrites.of(dataSource);
        transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    }

    @AfterAll
    static void tearDown() {
        schema.close();
    }

    @BeforeEach
    void freshRow() {
        schema.execute("DELETE FROM " + schema.name() + ".orders");
        schema.execute("INSERT INTO " + schema.name() + ".orders VALUES (1, 'new', 0)");
    }

    String row() {
        return schema.query("SELECT status, fence_token FROM orders WHERE id = 1").get(0);
    }

    @Test
    void aWriteInsideATransactionCommitsWithIt() {
        transaction.executeWithoutResult(status -> {
            assertThat(writes.on(orders).update(1L, FenceToken.of(5), Assignments.of("status", "paid")))
                    .isInstanceOf(WriteOutcome.Applied.class);
            assertThat(row()).as("another connection does not see the write before the commit").isEqualTo("new|0");
        });
        assertThat(row()).isEqualTo("paid|5");
    }

    @Test
    void aRollbackAfterAFencedWriteLeavesNeitherTheDataNorTheFenceChanged() {
        transaction.executeWithoutResult(status -> {
            assertThat(writes.on(orders).update(1L, FenceToken.of(5), Assignments.of("status", "paid")))
                    .isInstanceOf(WriteOutcome.Applied.class);
            status.setRollbackOnly();
        });
        assertThat(row()).isEqualTo("new|0");
        // The fence did not move: a write with a lower fence than the rolled-back one still applies.
        assertThat(writes.on(orders).update(1L, FenceToken.of(3), Assignments.of("status", "shipped")))
                .isInstanceOf(WriteOutcome.Applied.class);
        assertThat(row()).isEqualTo("shipped|3");
    }

    @Test
    void aStaleWriteInsideATransactionIsRefusedAndTheTransactionGoesOn() {
        writes.on(orders).update(1L, FenceToken.of(10), Assignments.of("status", "paid")).orThrow();
        transaction.executeWithoutResult(status -> {
            assertThat(writes.on(orders).update(1L, FenceToken.of(5), Assignments.of("status", "zombie")))
                    .isInstanceOfSatisfying(WriteOutcome.Stale.class, stale -> assertThat(stale.currentFence()).isEqualTo(10));
            assertThat(writes.on(orders).update(1L, FenceToken.of(10), Assignments.of("status", "refunded")))
                    .isInstanceOf(WriteOutcome.Applied.class);
        });
        assertThat(row()).isEqualTo("refunded|10");
    }

    @Test
    void aWriteOutsideAnyTransactionIsCommittedWhenItReturns() {
        assertThat(writes.on(orders).update(1L, FenceToken.of(7), Assignments.of("status", "paid")))
                .isInstanceOf(WriteOutcome.Applied.class);
        assertThat(row()).isEqualTo("paid|7");
    }

    @Test
    void aWriteOutsideAnyTransactionIsCommittedEvenWhenThePoolTurnsAutoCommitOff() {
        try (HikariDataSource pool = new HikariDataSource()) {
            pool.setDataSource(dataSource);
            pool.setAutoCommit(false);
            pool.setMaximumPoolSize(2);
            assertThat(TransactionalFencedWrites.of(pool).on(orders).update(1L, FenceToken.of(8), Assignments.of("status", "paid")))
                    .isInstanceOf(WriteOutcome.Applied.class);
        }
        assertThat(row()).isEqualTo("paid|8");
    }
}
