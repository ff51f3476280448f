package dev.fenceguard.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockContext;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.spring.EnableFencedLocks;
import dev.fenceguard.spring.FencedLock;
import dev.fenceguard.spring.internal.FencedLockAdvisor;
import dev.fenceguard.spring.jdbc.TransactionalFencedWrites;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@code @FencedLock} as the auto-configuration applies it: the {@code fence-guard.*} properties, and an
 * application's own {@code @EnableFencedLocks}. The annotation's behaviour itself is tested without Spring
 * Boot, in fence-guard-spring's {@code EnableFencedLocksTest}.
 */
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
            .withPropertyValues("fence-guard.jdbc.schema=" + schema.name())
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

        @FencedLock(key = "'defaults:' + #p0")
        public Lease withDefaults(String name, Lease lease) {
            return lease;
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
    void theDefaultsComeFromTheProperties() {
        runner.withPropertyValues("fence-guard.default-ttl=13s").run(ctx -> assertThat(ctx.getBean(Orders.class).withDefaults("a", null).ttl())
                .isEqualTo(Duration.ofSeconds(13)));
    }

    @Test
    void theLockIsTakenBeforeTheTransactionAndARollbackUndoesTheFencedWrite() {
        runner.run(ctx -> {
            Orders orders = ctx.getBean(Orders.class);
            assertThatThrownBy(() -> orders.pay(3, null, true)).hasMessage("payment failed after the write");
            assertThat(schema.query("SELECT status, fence_token FROM orders WHERE id = 3")).containsExactly("new|0");
            orders.pay(3, null, false);
            assertThat(schema.query("SELECT status FROM orders WHERE id = 3")).containsExactly("paid");
        });
    }

    /** An application of Spring Boot that turns the annotation on itself, as it would without Boot. */
    @Configuration(proxyBeanMethods = false)
    @EnableFencedLocks(defaultTtl = "14s")
    static class OwnEnable {}

    @Test
    void anApplicationsEnableFencedLocksReplacesTheAutoConfiguredAdvice() {
        // tried: both at once would lock twice, and the inner acquisition would wait for the outer one
        runner.withUserConfiguration(OwnEnable.class).withPropertyValues("fence-guard.default-ttl=13s").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(ctx.getBeansOfType(FencedLockAdvisor.class)).hasSize(1);
            assertThat(ctx.getBean(Orders.class).withDefaults("b", null).ttl()).isEqualTo(Duration.ofSeconds(14));
        });
    }

    @Test
    void anAdviceOrderedAfterTheTransactionAdviceFailsStartup() {
        runner.withPropertyValues("fence-guard.annotation.order=2147483647").run(ctx -> assertThat(ctx).hasFailed().getFailure()
                .hasStackTraceContaining("the @FencedLock advice (order 2147483647) must run before the transaction advice")
                .hasStackTraceContaining("fence-guard.annotation.order with Spring Boot"));
    }

    @Test
    void turnedOffTheAnnotationDoesNothing() {
        runner.withPropertyValues("fence-guard.annotation.enabled=false").run(ctx -> {
            // still proxied for @Transactional, but no lock is taken and no lease handed over
            assertThat(ctx.getBean(Orders.class).lease(5, null)).isEqualTo(new Seen(null, null));
            assertThat(ctx.getBean(LockClient.class).lookup("orders:5")).isEmpty();
        });
    }
}
