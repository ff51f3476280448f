package dev.fenceguard.examples.docs.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.examples.docs.EmbeddedOrders;
import dev.fenceguard.spring.jdbc.TransactionalFencedWrites;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * Runs the samples of docs/spring.md, docs/spring-boot.md and the Javadoc of fence-guard-spring in plain
 * Spring contexts (no Spring Boot), on the embedded PostgreSQL's {@code public} schema that they name: its
 * lock table, {@code public.orders} (row 42), and the {@code outbox} and {@code payments} tables of this test.
 */
class SpringSamplesTest {

    private static DataSource dataSource;
    private static DSLContext sql;

    @BeforeAll
    static void setUp() {
        dataSource = EmbeddedOrders.dataSource();   // one instance: Spring binds a transaction's connection to it
        sql = DSL.using(dataSource, SQLDialect.POSTGRES);
        sql.execute("CREATE TABLE public.outbox (order_id BIGINT PRIMARY KEY)");
        sql.execute("CREATE TABLE public.payments (id TEXT PRIMARY KEY, amount_cents BIGINT NOT NULL, fence_token BIGINT NOT NULL DEFAULT 0)");
    }

    @AfterAll
    static void tearDown() {
        sql.execute("DROP TABLE public.outbox");
        sql.execute("DROP TABLE public.payments");
    }

    @BeforeEach
    void newOrder() {
        sql.execute("UPDATE public.orders SET status = 'new' WHERE id = 42");
        sql.execute("DELETE FROM public.outbox");
    }

    private static String order() {
        return sql.fetchSingle("SELECT status FROM public.orders WHERE id = 42").get(0, String.class);
    }

    private static long orderFence() {
        return sql.fetchSingle("SELECT fence_token FROM public.orders WHERE id = 42").get(0, Long.class);
    }

    /** A context with the one DataSource and its transaction manager, and what {@code beans} adds. */
    private static AnnotationConfigApplicationContext context(Consumer<AnnotationConfigApplicationContext> beans) {
        AnnotationConfigApplicationContext spring = new AnnotationConfigApplicationContext();
        spring.registerBean(DataSource.class, () -> dataSource);
        spring.registerBean(PlatformTransactionManager.class, () -> new DataSourceTransactionManager(dataSource));
        beans.accept(spring);
        spring.refresh();
        return spring;
    }

    /** The context of docs/spring.md's configuration, with the beans of docs/spring-boot.md's samples. */
    private static AnnotationConfigApplicationContext springMdContext() {
        return context(spring -> spring.register(LockingConfig.class, Orders.class, Outbox.class, BootOrders.class));
    }

    @Test
    void enableFencedLocksShipsTheOrderUnderItsLockInATransaction() {
        try (AnnotationConfigApplicationContext spring = springMdContext()) {
            spring.getBean(Orders.class).ship(42L, null);   // the advice passes the lease
            assertThat(order()).isEqualTo("shipped");
            assertThat(spring.getBean(LockClient.class).lookup("orders:42")).as("released").isEmpty();
        }
    }

    @Test
    void springBootShipWritesTheOrderAndTheOutboxInOneTransaction() {
        try (AnnotationConfigApplicationContext spring = springMdContext()) {
            BootOrders orders = spring.getBean(BootOrders.class);
            orders.ship(42L, null);
            assertThat(order()).isEqualTo("shipped");
            assertThat(sql.fetch("SELECT order_id FROM public.outbox").getValues(0, Long.class)).containsExactly(42L);

            sql.execute("UPDATE public.orders SET status = 'paid' WHERE id = 42");
            assertThatThrownBy(() -> orders.ship(42L, null)).as("the outbox row exists: the insert fails")
                    .isInstanceOf(DuplicateKeyException.class);
            assertThat(order()).as("the fenced write rolled back with it").isEqualTo("paid");
        }
    }

    @Test
    void springBootPayGetsTheLeaseAndWritesWithItsFence() {
        try (AnnotationConfigApplicationContext spring = springMdContext()) {
            BootOrders.Receipt receipt = spring.getBean(BootOrders.class).pay("o-7", 4200, null);
            assertThat(receipt.orderId()).isEqualTo("o-7");
            assertThat(sql.fetchSingle("SELECT amount_cents, fence_token FROM public.payments WHERE id = 'o-7'").intoArray())
                    .containsExactly(4200L, receipt.fence().value());
            assertThat(spring.getBean(LockClient.class).lookup("orders:o-7")).as("released").isEmpty();
        }
    }

    /** The context of the Javadoc's configuration (found by scanning its package), with the Javadoc samples' bean. */
    private static AnnotationConfigApplicationContext javadocContext() {
        return context(spring -> {
            spring.registerBean(TransactionalFencedWrites.class, () -> TransactionalFencedWrites.of(dataSource));
            spring.scan(LockingConfig.class.getPackageName() + ".javadoc");
            spring.register(Outbox.class, Payments.class);
        });
    }

    @Test
    void fencedLockPayChargesAndMarksTheOrderPaidWithTheLeasesFence() {
        try (AnnotationConfigApplicationContext spring = javadocContext()) {
            Payments.Receipt receipt = spring.getBean(Payments.class).pay(42L, null);
            assertThat(order()).isEqualTo("paid");
            assertThat(orderFence()).isEqualTo(receipt.fence().value());
        }
    }

    @Test
    void transactionalFencedWritesShipAndItsOutboxRowCommitTogether() {
        try (AnnotationConfigApplicationContext spring = javadocContext()) {
            Payments payments = spring.getBean(Payments.class);
            payments.ship(42L, null);
            assertThat(order()).isEqualTo("shipped");
            assertThat(sql.fetch("SELECT order_id FROM public.outbox").getValues(0, Long.class)).containsExactly(42L);

            sql.execute("UPDATE public.orders SET status = 'paid' WHERE id = 42");
            assertThatThrownBy(() -> payments.ship(42L, null)).isInstanceOf(DuplicateKeyException.class);
            assertThat(order()).as("rolled back with the outbox insert").isEqualTo("paid");
        }
    }
}
