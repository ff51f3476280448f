package dev.fenceguard.spring.boot.autoconfigure;

import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.firestore.FenceGuardFirestore;
import dev.fenceguard.firestore.FencedFirestore;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.redis.FencedRedis;
import dev.fenceguard.spring.jdbc.TransactionalFencedWrites;
import java.util.List;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.jdbc.datasource.DataSourceUtils;

/**
 * The lock client: a {@link LockClient} over the lock backend the application's beans allow (a
 * {@link DataSource} for PostgreSQL, MariaDB or MySQL, whichever it is to; a Lettuce client or Spring
 * Data Redis connection factory for Redis; a {@link Firestore}), with fence-guard's meters and observations when Micrometer is there;
 * the fenced-write helpers of each store present ({@link FencedRedis}, {@link FencedFirestore},
 * {@link TransactionalFencedWrites}); a check at startup that the SQL lock table exists.
 *
 * <p>Every bean here gives way to one of the application's own of the same type: a {@link LockBackend}
 * bean is wrapped in the client instead of building one, a {@link LockClient} bean replaces the client.
 * With more than one store present, {@code fence-guard.backend} chooses; startup fails if it is needed
 * and unset, naming the stores found.
 *
 * @since 0.1
 */
@AutoConfiguration(after = {FenceGuardMetricsAutoConfiguration.class, FenceGuardRedisAutoConfiguration.class,
        FenceGuardFirestoreAutoConfiguration.class},
        afterName = {"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
                "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration"})
@EnableConfigurationProperties(FenceGuardProperties.class)
public final class FenceGuardAutoConfiguration {

    FenceGuardAutoConfiguration() {}

    /**
     * The SQL database of the application's one DataSource; which one it is (PostgreSQL, MariaDB, MySQL)
     * is learnt when the backend is built. (Member configurations are registered in {@link Order} before
     * the beans of this class, so that the selection below sees every candidate.)
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(FenceGuardJdbc.class)
    @ConditionalOnSingleCandidate(DataSource.class)
    @Order(1)
    static final class Jdbc {
        static final String LOCK_TABLE_BEAN = "fenceGuardJdbcLockTable";

        @Bean(LOCK_TABLE_BEAN)
        JdbcLockTable fenceGuardJdbcLockTable(DataSource dataSource, FenceGuardProperties properties) {
            return new JdbcLockTable(dataSource, properties);
        }

        @Bean
        BackendCandidate fenceGuardJdbcCandidate(JdbcLockTable table) {
            return new BackendCandidate(FenceGuardProperties.Backend.JDBC, "a DataSource bean", table::createBackend);
        }
    }

    /** Fenced SQL writes that join the caller's Spring transaction. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({FencedTable.class, DataSourceUtils.class})
    @ConditionalOnSingleCandidate(DataSource.class)
    @Order(2)
    static final class TransactionalWrites {
        @Bean
        @ConditionalOnMissingBean
        TransactionalFencedWrites fenceGuardTransactionalFencedWrites(DataSource dataSource) {
            return TransactionalFencedWrites.of(dataSource);
        }
    }

    /** Redis, when {@link FenceGuardRedisAutoConfiguration} (or the application) made a {@link FenceGuardRedis}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(FenceGuardRedis.class)
    @ConditionalOnSingleCandidate(FenceGuardRedis.class)
    @Order(3)
    static final class Redis {
        @Bean
        BackendCandidate fenceGuardRedisCandidate(FenceGuardRedis redis) {
            return new BackendCandidate(FenceGuardProperties.Backend.REDIS, "a Redis client", redis::lockBackend);
        }

        @Bean
        @ConditionalOnMissingBean
        FencedRedis fenceGuardFencedRedis(FenceGuardRedis redis) {
            return redis.fencedWrites();
        }
    }

    /** Firestore, when {@link FenceGuardFirestoreAutoConfiguration} (or the application) made a {@link FenceGuardFirestore}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(FenceGuardFirestore.class)
    @ConditionalOnSingleCandidate(FenceGuardFirestore.class)
    @Order(4)
    static final class FirestoreBackend {
        @Bean
        BackendCandidate fenceGuardFirestoreCandidate(FenceGuardFirestore firestore) {
            return new BackendCandidate(FenceGuardProperties.Backend.FIRESTORE, "a Firestore bean", firestore::lockBackend);
        }

        @Bean
        @ConditionalOnMissingBean
        FencedFirestore fenceGuardFencedFirestore(FenceGuardFirestore firestore) {
            return firestore.fencedWrites();
        }
    }

    /** Builds the one candidate the application can use, or the one {@code fence-guard.backend} names. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(BackendCandidate.class)
    @ConditionalOnMissingBean(LockBackend.class)
    @Order(5)
    static final class Selection {
        @Bean
        LockBackend fenceGuardLockBackend(List<BackendCandidate> candidates, FenceGuardProperties properties) {
            return select(candidates, properties.getBackend()).create();
        }
    }

    static BackendCandidate select(List<BackendCandidate> candidates, FenceGuardProperties.Backend wanted) {
        String found = candidates.stream().map(c -> c.kind().name().toLowerCase(java.util.Locale.ROOT) + " (" + c.source() + ")")
                .collect(Collectors.joining(", "));
        if (wanted != null) {
            return candidates.stream().filter(c -> c.kind() == wanted).findFirst().orElseThrow(() -> new IllegalStateException(
                    "fence-guard.backend is " + wanted.name().toLowerCase(java.util.Locale.ROOT) + ", but the application has no "
                            + needs(wanted) + "; the lock backends it allows: " + found));
        }
        if (candidates.size() > 1) {
            throw new IllegalStateException("fence-guard found several possible lock backends: " + found
                    + "; set fence-guard.backend to one of them");
        }
        return candidates.get(0);
    }

    static String needs(FenceGuardProperties.Backend backend) {
        return switch (backend) {
            case JDBC -> "single DataSource bean (with fence-guard-jdbc on the class path)";
            case REDIS -> "Lettuce RedisClient, RedisClusterClient or Spring Data Redis LettuceConnectionFactory bean (with "
                    + "fence-guard-redis on the class path)";
            case FIRESTORE -> "Firestore bean (with fence-guard-firestore on the class path)";
        };
    }

    @Bean
    @ConditionalOnBean(LockBackend.class)
    @ConditionalOnMissingBean
    LockClient fenceGuardLockClient(LockBackend backend, FenceGuardProperties properties, ObjectProvider<LockMetrics> metrics,
            ObjectProvider<LockObservations> observations) {
        LockClient.Builder builder = LockClient.builder(backend);
        Settings.apply("call-timeout", properties.getCallTimeout(), builder::withCallTimeout);
        Settings.apply("release-timeout", properties.getReleaseTimeout(), builder::withReleaseTimeout);
        metrics.ifAvailable(builder::withMetrics);
        observations.ifAvailable(builder::withObservations);
        return builder.build();
    }

    @Bean
    static FenceGuardStartup fenceGuardStartup() {
        return new FenceGuardStartup();
    }
}
