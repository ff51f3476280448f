package dev.fenceguard.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockContext;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.spring.internal.FencedLockAdvisor;
import dev.fenceguard.spring.jdbc.TransactionalFencedWrites;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@code @FencedLock} in a plain Spring application context (no Spring Boot on the class path), turned
 * on by {@code @EnableFencedLocks}, on the PostgreSQL lock backend, with Spring's transactions.
 */
class EnableFencedLocksTest {

    static TestPostgres.Schema schema;
    static DataSource dataSource;
    static FencedTable ordersTable;

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("springlock");
        FenceGuardMigrations.builder(schema.dataSource()).withSchema(schema.name()).migrate();
        schema.execute("CREATE TABLE " + schema.name() + ".orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL,"
                + " fence_token BIGINT NOT NULL DEFAULT 0)");
        dataSource = schema.dataSource(); // one instance: Spring binds the transaction's connection to it
        ordersTable = FencedTable.builder(schema.name(), "orders", "id", "fence_token").withKeyType(Long.class).build();
    }

    @AfterAll
    static void tearDown() {
        schema.close();
    }

    /** What an application without Spring Boot writes: a lock client bean, the two @Enable annotations. */
    @Configuration(proxyBeanMethods = false)
    @EnableFencedLocks(defaultTtl = "12s")
    @EnableTransactionManagement
    static class App {
        @Bean
        DataSource dataSource() {
            return dataSource;
        }

        @Bean
        LockClient lockClient(DataSource dataSource) {
            return LockClient.of(FenceGuardJdbc.builder(dataSource).withSchema(schema.name()).build().lockBackend());
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        TransactionalFencedWrites transactionalFencedWrites(DataSource dataSource) {
            return TransactionalFencedWrites.of(dataSource);
        }

        @Bean
        Orders orders(TransactionalFencedWrites writes) {
            return new Orders(writes);
        }

        @Bean
        Caller caller(Orders orders) {
            return new Caller(orders);
        }
    }

    static class Orders {
        final TransactionalFencedWrites writes;

        Orders(TransactionalFencedWrites writes) {
            this.writes = writes;
        }

        @FencedLock(key = "'orders:' + #orderId", ttl = "10s", maxWait = "0s")
        public Seen lease(long orderId, Lease lease) {
            return new Seen(lease, LockContext.current().orElse(null));
        }

        @FencedLock(key = "'defaults:' + #p0")
        public Lease withDefaults(String name, Lease lease) {
            return lease;
        }

        @FencedLock(key = "'orders:' + #orderId", maxWait = "0s")
        public void hold(long orderId, CountDownLatch entered, CountDownLatch release) throws InterruptedException {
            entered.countDown();
            release.await();
        }

        @FencedLock(key = "#p0")
        public String returnsNull(String key) {
            return null;
        }

        /** Locked, then transactional: the fenced write joins the transaction and rolls back with it. */
        @FencedLock(key = "'orders:' + #orderId")
        @Transactional
        public void pay(long orderId, Lease lease, boolean fail) {
            assertThat(TransactionSynchronizationManager.isActualTransactionActive()).isTrue();
            assertThat(lease.isValid()).isTrue();
            schema.execute("INSERT INTO " + schema.name() + ".orders VALUES (" + orderId + ", 'new', 0) ON CONFLICT DO NOTHING");
            writes.on(ordersTable).update(orderId, lease.fence(), Assignments.of("status", "paid")).orThrow();
            if (fail) {
                throw new IllegalStateException("payment failed after the write");
            }
        }
    }

    /** The lease a method was handed, and the one its thread's LockContext held. */
    record Seen(Lease parameter, Lease context) {
        Lease lease() {
            assertThat(context).isSameAs(parameter);
            return parameter;
        }
    }

    static class Caller {
        final Orders orders;

        Caller(Orders orders) {
            this.orders = orders;
        }

        @Transactional
        public Seen insideATransaction(long orderId) {
            return orders.lease(orderId, null);
        }
    }

    static void run(Consumer<AnnotationConfigApplicationContext> test, Class<?>... configuration) {
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext(configuration)) {
            test.accept(ctx);
        }
    }

    static void run(Consumer<AnnotationConfigApplicationContext> test) {
        run(test, App.class);
    }

    @Test
    void springBootIsNotOnTheClassPath() {
        // what this module promises: the annotation works in a Spring application without Spring Boot
        assertThatThrownBy(() -> Class.forName("org.springframework.boot.SpringApplication")).isInstanceOf(ClassNotFoundException.class);
    }

    @Test
    void theMethodRunsUnderTheLockAndGetsTheLease() {
        run(ctx -> {
            assertThat(ctx.getBeansOfType(FencedLockAdvisor.class)).containsOnlyKeys(FencedLockAdvisor.BEAN_NAME);
            Orders orders = ctx.getBean(Orders.class);
            Lease first = orders.lease(1, null).lease();
            Lease second = orders.lease(1, null).lease();
            assertThat(first.key().value()).isEqualTo("orders:1");
            assertThat(first.ttl()).isEqualTo(Duration.ofSeconds(10));
            assertThat(second.fence().value()).isGreaterThan(first.fence().value());
            assertThat(first.isValid()).as("released when the method returned").isFalse();
            assertThat(ctx.getBean(LockClient.class).lookup("orders:1")).isEmpty();
            assertThat(schema.query("SELECT fence FROM fence_guard_locks WHERE lock_key = 'orders:1'"))
                    .containsExactly(Long.toString(second.fence().value()));
        });
    }

    @Test
    void anAnnotationThatSetsNoTtlGetsTheDefaultOfEnableFencedLocks() {
        run(ctx -> assertThat(ctx.getBean(Orders.class).withDefaults("a", null).ttl()).isEqualTo(Duration.ofSeconds(12)));
    }

    @Test
    void aSecondCallerIsRefusedWhileTheLockIsHeld() {
        run(ctx -> {
            Orders orders = ctx.getBean(Orders.class);
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicReference<Throwable> holderFailed = new AtomicReference<>();
            Thread holder = Thread.ofVirtual().start(() -> {
                try {
                    orders.hold(2, entered, release);
                } catch (Throwable t) {
                    holderFailed.set(t);
                }
            });
            try {
                entered.await();
                assertThatThrownBy(() -> orders.lease(2, null)).isInstanceOfSatisfying(LockNotAcquiredException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT);
                    assertThat(e.key()).contains("orders:2");
                    assertThat(e).hasMessageContaining("@FencedLock Orders.lease(long, Lease) did not run");
                });
                release.countDown();
                holder.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertThat(holderFailed.get()).isNull();
            assertThat(orders.lease(2, null).lease().key().value()).isEqualTo("orders:2");
        });
    }

    @Test
    void aMethodMayReturnNull() {
        run(ctx -> assertThat(ctx.getBean(Orders.class).returnsNull("null-result")).isNull());
    }

    @Test
    void aKeyThatEvaluatesToNothingFailsTheCallBeforeAnyLockIsAsked() {
        run(ctx -> {
            Orders orders = ctx.getBean(Orders.class);
            // tried: a null argument as the whole key
            assertThatThrownBy(() -> orders.returnsNull(null)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("key #p0 evaluated to null");
            // tried: an empty string, which is not a valid lock key
            assertThatThrownBy(() -> orders.returnsNull("")).isInstanceOf(IllegalArgumentException.class);
        });
    }

    @Test
    void theLockIsTakenBeforeTheTransactionAndARollbackUndoesTheFencedWrite() {
        run(ctx -> {
            Orders orders = ctx.getBean(Orders.class);
            assertThatThrownBy(() -> orders.pay(3, null, true)).hasMessage("payment failed after the write");
            assertThat(schema.query("SELECT status, fence_token FROM orders WHERE id = 3")).containsExactly("new|0");
            orders.pay(3, null, false);
            assertThat(schema.query("SELECT status FROM orders WHERE id = 3")).containsExactly("paid");
            long fence = Long.parseLong(schema.query("SELECT fence_token FROM orders WHERE id = 3").get(0));
            // a zombie of the first, failed call (a lower fence) is refused by the row
            assertThat(ctx.getBean(TransactionalFencedWrites.class).on(ordersTable)
                    .update(3L, FenceToken.of(fence - 1), Assignments.of("status", "zombie"))).isInstanceOf(WriteOutcome.Stale.class);
        });
    }

    @Test
    void aCallInsideAnActiveTransactionFailsBeforeTheLockIsAsked() {
        run(ctx -> {
            assertThatThrownBy(() -> ctx.getBean(Caller.class).insideATransaction(4)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("@FencedLock Orders.lease(long, Lease) was called inside an active transaction");
            assertThat(schema.query("SELECT count(*) FROM fence_guard_locks WHERE lock_key = 'orders:4'")).containsExactly("0");
        });
    }

    @Configuration(proxyBeanMethods = false)
    @EnableFencedLocks(order = Integer.MAX_VALUE)
    @EnableTransactionManagement
    static class AfterTransactions {
        @Bean
        LockClient lockClient() {
            return LockClient.of(FenceGuardJdbc.builder(dataSource).withSchema(schema.name()).build().lockBackend());
        }

        @Bean
        PlatformTransactionManager transactionManager() {
            return new DataSourceTransactionManager(dataSource);
        }
    }

    @Test
    void anAdviceOrderedAfterTheTransactionAdviceFailsStartup() {
        assertThatThrownBy(() -> run(ctx -> {}, AfterTransactions.class))
                .hasStackTraceContaining("the @FencedLock advice (order 2147483647) must run before the transaction advice")
                .hasStackTraceContaining("@EnableFencedLocks(order = ..) without) below 2147483647");
    }

    @Configuration(proxyBeanMethods = false)
    @EnableFencedLocks(defaultTtl = "soon")
    static class BadDefaultTtl {}

    @Configuration(proxyBeanMethods = false)
    @EnableFencedLocks(defaultWait = "-1s")
    static class NegativeDefaultWait {}

    @Test
    void anInvalidEnableFencedLocksFailsStartupNamingTheAttribute() {
        assertThatThrownBy(() -> run(ctx -> {}, BadDefaultTtl.class))
                .hasStackTraceContaining("@EnableFencedLocks on " + BadDefaultTtl.class.getName() + ": defaultTtl 'soon' is not a duration");
        assertThatThrownBy(() -> run(ctx -> {}, NegativeDefaultWait.class))
                .hasStackTraceContaining("@EnableFencedLocks on " + NegativeDefaultWait.class.getName() + ": ")
                .hasStackTraceContaining("maxWait must not be negative");
    }

    static class BadTtl {
        @FencedLock(key = "'x'", ttl = "soon")
        public void run() {}
    }

    static class ZeroTtl {
        @FencedLock(key = "'x'", ttl = "0s")
        public void run() {}
    }

    static class TwoLeases {
        @FencedLock(key = "'x'")
        public void run(Lease a, Lease b) {}
    }

    static class BadKey {
        @FencedLock(key = "'unclosed")
        public void run() {}
    }

    @Test
    void anInvalidAnnotationFailsStartupNamingTheMethod() {
        assertThatThrownBy(() -> run(ctx -> {}, App.class, BadTtl.class))
                .hasStackTraceContaining("@FencedLock on BadTtl.run(): ttl 'soon' is not a duration");
        assertThatThrownBy(() -> run(ctx -> {}, App.class, ZeroTtl.class))
                .hasStackTraceContaining("@FencedLock on ZeroTtl.run(): ttl must be at least 1 ms");
        assertThatThrownBy(() -> run(ctx -> {}, App.class, TwoLeases.class))
                .hasStackTraceContaining("@FencedLock on TwoLeases.run(Lease, Lease): has more than one Lease parameter (1 and 2)");
        assertThatThrownBy(() -> run(ctx -> {}, App.class, BadKey.class))
                .hasStackTraceContaining("@FencedLock on BadKey.run(): key ''unclosed' is not a SpEL expression");
    }
}
