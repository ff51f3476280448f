package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.shedlock.FencedLockProvider;
import java.util.Map;
import net.javacrumbs.shedlock.core.LockProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * With {@code fence-guard.shedlock.enabled=true} (off by default) and ShedLock and fence-guard-shedlock on
 * the class path, ShedLock's {@link LockProvider} is a {@link FencedLockProvider} over the application's
 * {@link LockClient}, so that {@code @SchedulerLock} jobs read their fence with
 * {@code LockContext.requireHeld(name)}. A {@code LockProvider} the application defines itself is never
 * replaced: it is kept, and a warning at startup names it.
 *
 * @since 0.1
 */
@AutoConfiguration(after = FenceGuardAutoConfiguration.class)
@ConditionalOnClass({LockProvider.class, FencedLockProvider.class})
@ConditionalOnBooleanProperty(name = "fence-guard.shedlock.enabled")
@ConditionalOnBean(LockClient.class)
public final class FenceGuardShedLockAutoConfiguration {

    private static final Logger log = LoggerFactory.getLogger(FenceGuardShedLockAutoConfiguration.class);

    FenceGuardShedLockAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean(LockProvider.class)
    static FencedLockProvider fenceGuardShedLockProvider(LockClient lockClient) {
        return FencedLockProvider.builder(lockClient).build();
    }

    /** Says, once the beans are there, that the application's own LockProvider was kept. */
    @Bean
    @ConditionalOnBean(LockProvider.class)
    static SmartInitializingSingleton fenceGuardShedLockProviderKept(ListableBeanFactory beans) {
        return () -> {
            Map<String, LockProvider> providers = beans.getBeansOfType(LockProvider.class, false, false);
            providers.forEach((name, provider) -> {
                if (!(provider instanceof FencedLockProvider)) {
                    log.warn("fence-guard.shedlock.enabled=true, but the application defines its own ShedLock LockProvider"
                            + " '{}' ({}): kept, so its @SchedulerLock jobs get no fence. Remove it to use fence-guard's.",
                            name, provider.getClass().getName());
                }
            });
        };
    }
}
