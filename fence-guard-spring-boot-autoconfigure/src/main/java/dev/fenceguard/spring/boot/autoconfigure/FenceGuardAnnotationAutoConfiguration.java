package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.spring.EnableFencedLocks;
import dev.fenceguard.spring.FencedLock;
import dev.fenceguard.spring.internal.FencedLockAdvisor;
import dev.fenceguard.spring.internal.FencedLockRegistrar;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Applies {@link FencedLock} to the application's beans when there is a {@link LockClient}, as
 * {@link EnableFencedLocks} does without Spring Boot, with the defaults and order of
 * {@code fence-guard.default-ttl}, {@code default-wait} and {@code annotation.order}. An application
 * that puts {@link EnableFencedLocks} on a configuration class keeps its own (this one then steps back);
 * {@code fence-guard.annotation.enabled=false} turns it off.
 *
 * @since 0.1
 */
@AutoConfiguration(after = FenceGuardAutoConfiguration.class)
@ConditionalOnBean(LockClient.class)
@ConditionalOnMissingBean(FencedLockAdvisor.class)
@ConditionalOnBooleanProperty(name = "fence-guard.annotation.enabled", matchIfMissing = true)
@EnableConfigurationProperties(FenceGuardProperties.class)
@Import(FenceGuardAnnotationAutoConfiguration.ProxyCreator.class)
public final class FenceGuardAnnotationAutoConfiguration {

    FenceGuardAnnotationAutoConfiguration() {}

    @Bean(FencedLockAdvisor.BEAN_NAME)
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static FencedLockAdvisor fenceGuardFencedLockAdvisor(FenceGuardProperties properties) {
        return new FencedLockAdvisor(properties.getDefaultTtl(), properties.getDefaultWait(), properties.getAnnotation().getOrder());
    }

    /** Registers an auto-proxy creator for infrastructure advisors unless a stronger one is there. */
    static final class ProxyCreator implements ImportBeanDefinitionRegistrar {
        @Override
        public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            FencedLockRegistrar.registerProxyCreator(registry);
        }
    }
}
