package dev.fenceguard.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockContext;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.shedlock.FencedLockProvider;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** fence-guard.shedlock.enabled: the fenced ShedLock provider one property away, never over the application's own. */
class ShedLockAutoConfigurationTest {

    final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(FenceGuardAutoConfiguration.class, FenceGuardShedLockAutoConfiguration.class))
            .withBean(LockBackend.class, InMemoryLockBackend::new);

    @Test
    void offByDefault() {
        runner.run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(LockClient.class).doesNotHaveBean(LockProvider.class));
    }

    @Test
    void enabledItIsTheLockProviderOverTheLockClientAndPutsTheLeaseInTheContext() {
        runner.withPropertyValues("fence-guard.shedlock.enabled=true").run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(LockProvider.class);
            FencedLockProvider provider = ctx.getBean(FencedLockProvider.class);
            assertThat(provider.lockClient()).isSameAs(ctx.getBean(LockClient.class));
            Optional<SimpleLock> lock = provider.lock(new LockConfiguration(Instant.now(), "boot-job", Duration.ofMinutes(1), Duration.ZERO));
            assertThat(lock).isPresent();
            assertThat(LockContext.requireHeld("boot-job").fence()).isNotNull();
            lock.orElseThrow().unlock();
            assertThat(LockContext.current("boot-job")).isEmpty();
        });
    }

    @Test
    void theApplicationsOwnLockProviderIsKept() {
        LockProvider own = configuration -> Optional.empty();
        runner.withPropertyValues("fence-guard.shedlock.enabled=true").withBean("ownLockProvider", LockProvider.class, () -> own)
                .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(LockProvider.class).getBean(LockProvider.class).isSameAs(own));
    }

    @Test
    void withoutShedLockOnTheClassPathTheSettingDoesNothing() {
        runner.withPropertyValues("fence-guard.shedlock.enabled=true").withClassLoader(new FilteredClassLoader(LockProvider.class))
                .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(LockClient.class).doesNotHaveBean(FencedLockProvider.class));
    }
}
