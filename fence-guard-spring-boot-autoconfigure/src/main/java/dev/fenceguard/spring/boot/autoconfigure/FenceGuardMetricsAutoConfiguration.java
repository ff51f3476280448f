package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.micrometer.MicrometerLockMetrics;
import dev.fenceguard.core.micrometer.MicrometerLockObservations;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Binds fence-guard's meters to the application's {@link MeterRegistry} and its observations to the
 * application's {@link ObservationRegistry}, when Micrometer and those beans are present. The lock
 * client, the Redis and Firestore handles and the fenced-write helpers built by the other
 * fence-guard auto-configurations report there. A {@link LockMetrics} or {@link LockObservations} bean
 * of the application's own replaces each.
 *
 * @since 0.1
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"})
@EnableConfigurationProperties(FenceGuardProperties.class)
public final class FenceGuardMetricsAutoConfiguration {

    FenceGuardMetricsAutoConfiguration() {}

    /** Meters in the application's registry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnBooleanProperty(name = "fence-guard.metrics.enabled", matchIfMissing = true)
    static final class Meters {
        @Bean
        @ConditionalOnMissingBean(LockMetrics.class)
        MicrometerLockMetrics fenceGuardLockMetrics(MeterRegistry registry) {
            return MicrometerLockMetrics.of(registry);
        }
    }

    /** Observations through the application's registry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    @ConditionalOnBean(ObservationRegistry.class)
    @ConditionalOnBooleanProperty(name = "fence-guard.observations.enabled", matchIfMissing = true)
    static final class Observations {
        @Bean
        @ConditionalOnMissingBean(LockObservations.class)
        MicrometerLockObservations fenceGuardLockObservations(ObservationRegistry registry) {
            return MicrometerLockObservations.of(registry);
        }
    }
}
