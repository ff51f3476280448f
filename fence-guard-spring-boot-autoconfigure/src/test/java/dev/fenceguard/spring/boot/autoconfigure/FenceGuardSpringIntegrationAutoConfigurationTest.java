package dev.fenceguard.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.spring.integration.FencedDistributedLock;
import dev.fenceguard.spring.integration.FencedLockRegistry;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/** The Spring Integration lock registry: one property away, off by default, never over the application's own. */
class FenceGuardSpringIntegrationAutoConfigurationTest {

    static TestPostgres.Schema schema;

    final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
            FenceGuardAutoConfiguration.class, FenceGuardSpringIntegrationAutoConfiguration.class))
            .withPropertyValues("fence-guard.metrics.enabled=false");

    @BeforeAll
    static void lockTable() {
        schema = TestServers.schema("bootsi");
        FenceGuardMigrations.builder(schema.dataSource()).withSchema(schema.name()).migrate();
    }

    @AfterAll
    static void cleanUp() {
        schema.close();
    }

    ApplicationContextRunner postgres() {
        return FenceGuardAutoConfigurationTest.postgres(runner, schema);
    }

    @Test
    void theRegistryIsOffByDefault() {
        postgres().run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(LockClient.class).doesNotHaveBean(LockRegistry.class));
    }

    @Test
    void onePropertyGivesAFencedRegistryOverTheLockClient() {
        postgres().withPropertyValues("fence-guard.spring-integration.enabled=true").run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(LockRegistry.class).hasSingleBean(FencedLockRegistry.class);
            FencedLockRegistry registry = ctx.getBean(FencedLockRegistry.class);
            assertThat(registry.ttl()).as("fence-guard.default-ttl").isEqualTo(Duration.ofSeconds(30));
            FencedDistributedLock lock = registry.obtain("boot:si");
            assertThat(lock.tryLock()).isTrue();
            long fence = lock.fence().value();
            assertThat(schema.query("SELECT fence FROM " + schema.name() + ".fence_guard_locks WHERE lock_key = 'boot:si'"))
                    .containsExactly(String.valueOf(fence));
            lock.unlock();
        });
        postgres().withPropertyValues("fence-guard.spring-integration.enabled=true", "fence-guard.spring-integration.ttl=12s")
                .run(ctx -> assertThat(ctx.getBean(FencedLockRegistry.class).ttl()).isEqualTo(Duration.ofSeconds(12)));
    }

    @Test
    void anApplicationLockRegistryIsKept() {
        postgres().withPropertyValues("fence-guard.spring-integration.enabled=true")
                .withBean(LockRegistry.class, DefaultLockRegistry::new).run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(LockRegistry.class).doesNotHaveBean(FencedLockRegistry.class);
                    assertThat(ctx.getBean(LockRegistry.class)).isInstanceOf(DefaultLockRegistry.class);
                });
    }

    @Test
    void withoutALockClientOrTheModuleThereIsNoRegistry() {
        runner.withPropertyValues("fence-guard.spring-integration.enabled=true")
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(LockClient.class).doesNotHaveBean(LockRegistry.class));
        postgres().withPropertyValues("fence-guard.spring-integration.enabled=true")
                .withClassLoader(new FilteredClassLoader(FencedLockRegistry.class))
                .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(LockClient.class).doesNotHaveBean(LockRegistry.class));
    }

    @Test
    void anInvalidTtlFailsStartupNamingIt() {
        postgres().withPropertyValues("fence-guard.spring-integration.enabled=true", "fence-guard.spring-integration.ttl=0s").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).hasStackTraceContaining("invalid fence-guard.spring-integration.ttl 'PT0S': ttl must be at least 1 ms");
        });
    }
}
