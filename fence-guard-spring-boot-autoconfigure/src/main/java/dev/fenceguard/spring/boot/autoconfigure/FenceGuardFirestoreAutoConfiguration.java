package dev.fenceguard.spring.boot.autoconfigure;

import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.firestore.FenceGuardFirestore;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * A {@link FenceGuardFirestore} (lock backend and fenced writes) over the application's
 * {@link Firestore} bean. A {@code FenceGuardFirestore} bean of the application's own replaces it.
 * Settings: {@code fence-guard.firestore.*}.
 *
 * @since 0.1
 */
@AutoConfiguration(after = FenceGuardMetricsAutoConfiguration.class)
@ConditionalOnClass({FenceGuardFirestore.class, Firestore.class})
@ConditionalOnSingleCandidate(Firestore.class)
@EnableConfigurationProperties(FenceGuardProperties.class)
public final class FenceGuardFirestoreAutoConfiguration {

    FenceGuardFirestoreAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    FenceGuardFirestore fenceGuardFirestore(Firestore firestore, FenceGuardProperties properties, ObjectProvider<LockMetrics> metrics,
            ObjectProvider<LockObservations> observations) {
        FenceGuardFirestore.Builder builder = FenceGuardFirestore.builder(firestore);
        FenceGuardProperties.Firestore settings = properties.getFirestore();
        Settings.apply("firestore.collection", settings.getCollection(), builder::withLockCollection);
        metrics.ifAvailable(builder::withMetrics);
        observations.ifAvailable(builder::withObservations);
        return Settings.store("firestore", settings, properties.getFenceStrategy(), builder::withCallTimeout, builder::withHorizon,
                builder::withClockMargin, builder::withFenceStrategy, builder::build);
    }
}
