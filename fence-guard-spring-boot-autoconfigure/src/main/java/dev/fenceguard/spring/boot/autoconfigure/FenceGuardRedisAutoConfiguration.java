package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.redis.FenceGuardRedis;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A {@link FenceGuardRedis} (lock backend and fenced writes on one connection) over the application's
 * Lettuce {@link RedisClient} or {@link RedisClusterClient} bean, or else over the native client of
 * Spring Data Redis's {@link LettuceConnectionFactory}. A {@code FenceGuardRedis} bean of the
 * application's own replaces it. Settings: {@code fence-guard.redis.*}, {@code fence-guard.fence-strategy}.
 *
 * @since 0.1
 */
@AutoConfiguration(after = FenceGuardMetricsAutoConfiguration.class,
        afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnClass({FenceGuardRedis.class, RedisClient.class})
@EnableConfigurationProperties(FenceGuardProperties.class)
public final class FenceGuardRedisAutoConfiguration {

    FenceGuardRedisAutoConfiguration() {}

    /** On a standalone or Sentinel Lettuce client bean. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(RedisClient.class)
    static final class OnRedisClient {
        @Bean
        @ConditionalOnMissingBean
        FenceGuardRedis fenceGuardRedis(RedisClient client, FenceGuardProperties properties, ObjectProvider<LockMetrics> metrics,
                ObjectProvider<LockObservations> observations) {
            return configure(FenceGuardRedis.builder(client), properties, metrics, observations);
        }
    }

    /** On a Lettuce Cluster client bean. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(RedisClusterClient.class)
    @ConditionalOnMissingBean(RedisClient.class)
    static final class OnRedisClusterClient {
        @Bean
        @ConditionalOnMissingBean
        FenceGuardRedis fenceGuardRedis(RedisClusterClient client, FenceGuardProperties properties, ObjectProvider<LockMetrics> metrics,
                ObjectProvider<LockObservations> observations) {
            return configure(FenceGuardRedis.builder(client), properties, metrics, observations);
        }
    }

    /** On the native client of Spring Data Redis's Lettuce connection factory, when there is no Lettuce client bean. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(LettuceConnectionFactory.class)
    @ConditionalOnSingleCandidate(LettuceConnectionFactory.class)
    @ConditionalOnMissingBean({RedisClient.class, RedisClusterClient.class})
    static final class OnLettuceConnectionFactory {
        @Bean
        @ConditionalOnMissingBean
        FenceGuardRedis fenceGuardRedis(LettuceConnectionFactory factory, FenceGuardProperties properties,
                ObjectProvider<LockMetrics> metrics, ObjectProvider<LockObservations> observations) {
            // The factory has started its client by now (Spring Data starts it when the bean is initialised).
            AbstractRedisClient client = factory.getRequiredNativeClient();
            FenceGuardRedis.Builder builder = client instanceof RedisClusterClient cluster ? FenceGuardRedis.builder(cluster)
                    : FenceGuardRedis.builder((RedisClient) client);
            return configure(builder, properties, metrics, observations);
        }
    }

    static FenceGuardRedis configure(FenceGuardRedis.Builder builder, FenceGuardProperties properties,
            ObjectProvider<LockMetrics> metrics, ObjectProvider<LockObservations> observations) {
        FenceGuardProperties.Redis redis = properties.getRedis();
        Settings.apply("redis.key-prefix", redis.getKeyPrefix(), builder::withKeyPrefix);
        Settings.apply("redis.fence-key-prefix", redis.getFenceKeyPrefix(), builder::withFenceKeyPrefix);
        metrics.ifAvailable(builder::withMetrics);
        observations.ifAvailable(builder::withObservations);
        return Settings.store("redis", redis, properties.getFenceStrategy(), builder::withCallTimeout, builder::withHorizon,
                builder::withClockMargin, builder::withFenceStrategy, builder::build);
    }
}
