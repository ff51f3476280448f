package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.Purge;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

/**
 * With {@code fence-guard.purge.enabled=true} (off by default), runs the purges of the application's
 * {@link FencePurges} beans every {@code fence-guard.purge.interval}, each bounded by
 * {@code fence-guard.purge.batch-size} and {@code fence-guard.purge.max-duration} and resumed where the last
 * one stopped; failures are logged and tried again on the next round. With Micrometer and a
 * {@code MeterRegistry} bean, each target's purges are timed as {@code fenceguard.purge.run} (tags
 * {@code target}, {@code outcome}). What may be removed is the store's rule, with the horizon each
 * fenced table or store was built with: these settings only bound the work (docs/fence-lifecycle.md).
 *
 * @since 0.1
 */
@AutoConfiguration(after = {FenceGuardMetricsAutoConfiguration.class, FenceGuardAutoConfiguration.class},
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnBooleanProperty(name = "fence-guard.purge.enabled")
@EnableConfigurationProperties(FenceGuardProperties.class)
public final class FenceGuardPurgeAutoConfiguration {

    private static final boolean MICROMETER = ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry",
            FenceGuardPurgeAutoConfiguration.class.getClassLoader());

    FenceGuardPurgeAutoConfiguration() {}

    @Bean
    static FencePurgeSchedule fenceGuardPurgeSchedule(ObjectProvider<FencePurges> purges, FenceGuardProperties properties,
            org.springframework.beans.factory.BeanFactory beans) {
        FenceGuardProperties.Purge p = properties.getPurge();
        Purge purge = Purge.ofDefaults().withBatchSize(p.getBatchSize()).withMaxDuration(p.getMaxDuration());
        FencePurgeSchedule.Meter meter = FencePurgeSchedule.Meter.NONE;
        if (MICROMETER && properties.getMetrics().isEnabled()) {
            meter = Micrometer.meter(beans);
        }
        return new FencePurgeSchedule(purges.orderedStream().toList(), purge, p.getInterval(), meter);
    }

    /** Touches Micrometer's types only when it is on the class path. */
    private static final class Micrometer {
        static FencePurgeSchedule.Meter meter(org.springframework.beans.factory.BeanFactory beans) {
            MeterRegistry registry = beans.getBeanProvider(MeterRegistry.class).getIfUnique();
            return registry == null ? FencePurgeSchedule.Meter.NONE : new PurgeRunMeters(registry);
        }
    }
}
