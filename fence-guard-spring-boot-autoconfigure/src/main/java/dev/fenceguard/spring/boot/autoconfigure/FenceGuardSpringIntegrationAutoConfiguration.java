package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.spring.integration.FencedLockRegistry;
import java.time.Duration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * A Spring Integration {@link LockRegistry} that is a {@link FencedLockRegistry} over the application's
 * {@link LockClient}, when {@code fence-guard.spring-integration.enabled=true} (off by default) and
 * fence-guard-spring-integration and spring-integration-core are on the class path. Its leases last
 * {@code fence-guard.spring-integration.ttl}, or {@code fence-guard.default-ttl} when that is unset. An
 * application that defines a {@link LockRegistry} of its own keeps it: this one then steps back.
 *
 * @since 0.1
 */
@AutoConfiguration(after = FenceGuardAutoConfiguration.class)
@ConditionalOnClass({LockRegistry.class, FencedLockRegistry.class})
@ConditionalOnBean(LockClient.class)
@ConditionalOnBooleanProperty(name = "fence-guard.spring-integration.enabled")
@EnableConfigurationProperties(FenceGuardProperties.class)
public final class FenceGuardSpringIntegrationAutoConfiguration {

    FenceGuardSpringIntegrationAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    FencedLockRegistry fenceGuardLockRegistry(LockClient lockClient, FenceGuardProperties properties) {
        Duration ttl = properties.getSpringIntegration().getTtl();
        return FencedLockRegistry.builder(lockClient).withTtl(ttl != null ? ttl : properties.getDefaultTtl()).build();
    }
}
