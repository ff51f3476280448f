package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.LockClient;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * A health indicator named {@code fenceGuard} for the lock backend, when Spring Boot's health support
 * (Actuator) is present and there is a {@link LockClient}. {@code management.health.fenceguard.enabled=false}
 * turns it off; a bean named {@code fenceGuardHealthIndicator} replaces it.
 *
 * @since 0.1
 */
@AutoConfiguration(after = FenceGuardAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(LockClient.class)
@ConditionalOnEnabledHealthIndicator("fenceguard")
public final class FenceGuardHealthAutoConfiguration {

    FenceGuardHealthAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean(name = "fenceGuardHealthIndicator")
    FenceGuardHealthIndicator fenceGuardHealthIndicator(LockClient client) {
        return new FenceGuardHealthIndicator(client);
    }
}
