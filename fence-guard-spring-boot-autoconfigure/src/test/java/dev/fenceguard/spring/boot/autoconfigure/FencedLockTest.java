package dev.fenceguard.spring.boot.autoconfigure;

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
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.spring.FencedLock;
import dev.fenceguard.spring.LockNotAcquiredException;
import dev.fenceguard.spring.jdbc.TransactionalFencedWrites;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/** {@code @FencedLock} on the PostgreSQL lock backend, with Spring's transactions. */
class FencedLockTest {

    static TestPostgres.Schema schema;
    static DataSource dataSource;

    @BeforeAll
    static void setUp() {
        schema = TestServers.schema("bootlock");
        FenceGuardMigrations.builder(schema.dataSource()).withSchema(schema.name()).migrate();
        schema.execute("CREATE TABLE " + schema.name() + ".orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL,"
                + " fence_token BIGINT NOT NULL DEFAULT 0)");
        dataSource = schema.dataSource();
    }

    @AfterAll
    static void tearDown() {
        schema.close();
    }

    final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(FenceGuardAutoConfigurationTest.FENCE_GUARD)
            .withBean("dataSource", DataSource.class, () -> dataSource)
            .withPropertyValues("fence-guard.postgresql.schema=" + schema.name())
            .withUserConfiguration(Transactions.class, Services.class);

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class Transactions {
        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Services {
        @Bean
        Orders orders(TransactionalFencedWrites writes) {
            return new Orders(writes, FencedTable.builder(schema.name(), "orders", "id", "fence_token").withKeyType(Long.class).build());
        }

        @Bean
        Caller caller(Orders orders) {
            return new Caller(orders);
        }
    }

    static class Orders {
        final TransactionalFencedWrites writes;
        final FencedTable table;

        Orders(TransactionalFencedWrites writes, FencedTable table) {
            this.writes = writes;
            this.table = table;
        }

        @FencedLock(key = "'orders:' + #orderId", ttl = "10s", maxWait = "0s")
        public Seen lease(long orderId, Lease lease) {
            return new Seen(lease, LockContext.current().orElse(null));
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
            insertIfAbsent(orderId);
            writes.on(table).update(orderId, lease.fence(), Assignments.of("status", "paid")).orThrow();
            if (fail) {
                throw new IllegalStateException("payment failed after the write");
            }
        }

        private void insertIfAbsent(long orderId) {
            schema.execute("INSERT INTO " + schema.name() + ".orders VALUES (" + orderId + ", 'new', 0) ON CONFLICT DO NOTHING");
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

    @Test
    void theMethodRunsUnderTheLockAndGetsTheLease() {
        runner.run(ctx -> {
            Orders orders = ctx.getBean(Orders.class);
            Lease first = orders.lease(1, null).lease();
            Lease second = orders.lease(1, null).lease();
            assertThat(first.key().value()).isEqualTo("orders:1");
            assertThat(second.fence().value()).isGreaterThan(first.fence().value());
            assertThat(first.isValid()).as("released when the method returned").isFalse();
            assertThat(ctx.getBean(LockClient.class).lookup("orders:1")).isEmpty();
        });
    }

    @Test
    void aSecondCallerIsRefusedWhileTheLockIsHeld() {
        runner.run(ctx -> {
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
            entered.await();
            assertThatThrownBy(() -> orders.lease(2, null)).isInstanceOfSatisfying(LockNotAcquiredException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT);
                assertThat(e.key()).contains("orders:2");
                assertThat(e).hasMessageContaining("@FencedLock Orders.lease(long, Lease) did not run");
            });
            release.countDown();
            holder.join();
            assertThat(holderFailed.get()).isNull();
            assertThat(orders.lease(2, null).lease().key().value()).isEqualTo("orders:2");
        });
    }

    @Test
    void aMethodMayReturnNull() {
        runner.run(ctx -> assertThat(ctx.getBean(Orders.class).returnsNull("null-result")).isNull());
    }

    @Test
    void aKeyThatEvaluatesToNothingFailsTheCallBeforeAnyLockIsAsked() {
        runner.run(ctx -> {
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
        runner.run(ctx -> {
            Orders orders = ctx.getBean(Orders.class);
            assertThatThrownBy(() -> orders.pay(3, null, true)).hasMessage("payment failed after the write");
            assertThat(schema.query("SELECT status, fence_token FROM orders WHERE id = 3")).containsExactly("new|0");
            orders.pay(3, null, false);
            assertThat(schema.query("SELECT status FROM orders WHERE id = 3")).containsExactly("paid");
            long fence = Long.parseLong(schema.query("SELECT fence_token FROM orders WHERE id = 3").get(0));
            // a zombie of the first, failed call (a lower fence) is refused by the row
            FencedTable table = FencedTable.builder(schema.name(), "orders", "id", "fence_token").withKeyType(Long.class).build();
            assertThat(ctx.getBean(TransactionalFencedWrites.class).on(table).update(3L, FenceToken.of(fence - 1), Assignments.of("status", "zombie")))
                    .isInstanceOf(WriteOutcome.Stale.class);
        });
    }

    @Test
    void aCallInsideAnActiveTransactionFailsBeforeTheLockIsAsked() {
        runner.run(ctx -> {
            assertThatThrownBy(() -> ctx.getBean(Caller.class).insideATransaction(4)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("@FencedLock Orders.lease(long, Lease) was called inside an active transaction");
            assertThat(schema.query("SELECT count(*) FROM fence_guard_locks WHERE lock_key = 'orders:4'")).containsExactly("0");
        });
    }

    @Test
    void anAdviceOrderedAfterTheTransactionAdviceFailsStartup() {
        runner.withPropertyValues("fence-guard.annotation.order=2147483647").run(ctx -> assertThat(ctx).hasFailed().getFailure()
                .hasStackTraceContaining("the @FencedLock advice (order 2147483647) must run before the transaction advice")
                .hasStackTraceContaining("set fence-guard.annotation.order below 2147483647"));
    }

    @Test
    void turnedOffTheAnnotationDoesNothing() {
        runner.withPropertyValues("fence-guard.annotation.enabled=false").run(ctx -> {
            // still proxied for @Transactional, but no lock is taken and no lease handed over
            assertThat(ctx.getBean(Orders.class).lease(5, null)).isEqualTo(new Seen(null, null));
            assertThat(ctx.getBean(LockClient.class).lookup("orders:5")).isEmpty();
        });
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
        runner.withBean(BadTtl.class).run(ctx -> assertThat(ctx).hasFailed().getFailure()
                .hasStackTraceContaining("@FencedLock on BadTtl.run(): ttl 'soon' is not a duration"));
        runner.withBean(ZeroTtl.class).run(ctx -> assertThat(ctx).hasFailed().getFailure()
                .hasStackTraceContaining("@FencedLock on ZeroTtl.run(): ttl must be at least 1 ms"));
        runner.withBean(TwoLeases.class).run(ctx -> assertThat(ctx).hasFailed().getFailure()
                .hasStackTraceContaining("@FencedLock on TwoLeases.run(Lease, Lease): has more than one Lease parameter (1 and 2)"));
        runner.withBean(BadKey.class).run(ctx -> assertThat(ctx).hasFailed().getFailure()
                .hasStackTraceContaining("@FencedLock on BadKey.run(): key ''unclosed' is not a SpEL expression"));
    }
}
