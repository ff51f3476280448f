package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.spi.LockBackend;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.ClassUtils;

/**
 * What fence-guard does once every singleton exists (so after Spring Boot's Flyway has run) and before
 * the application takes traffic: checks the SQL lock table, and is the one place where the lock
 * backend and the fenced writers are warmed up.
 */
final class FenceGuardStartup implements SmartInitializingSingleton, BeanFactoryAware {

    private ConfigurableListableBeanFactory beans;

    @Override
    public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
        this.beans = (ConfigurableListableBeanFactory) beanFactory;
    }

    @Override
    public void afterSingletonsInstantiated() {
        FenceGuardProperties properties = beans.getBean(FenceGuardProperties.class);
        LockBackend backend = beans.getBeanProvider(LockBackend.class).getIfUnique();
        if (backend == null && properties.getBackend() != null) {
            throw new IllegalStateException("fence-guard.backend is " + properties.getBackend().name().toLowerCase(java.util.Locale.ROOT)
                    + ", but the application has no " + FenceGuardAutoConfiguration.needs(properties.getBackend()));
        }
        verifyLockTable(properties, backend);
        warmUp(backend);
    }

    private void verifyLockTable(FenceGuardProperties properties, LockBackend backend) {
        if (!properties.getJdbc().isVerifyTable() || !beans.containsBean(FenceGuardAutoConfiguration.Jdbc.LOCK_TABLE_BEAN)) {
            return;
        }
        JdbcLockTable table = beans.getBean(FenceGuardAutoConfiguration.Jdbc.LOCK_TABLE_BEAN, JdbcLockTable.class);
        if (table.built(backend)) {
            table.verify(beans.containsBean(FenceGuardFlywayAutoConfiguration.CALLBACK_BEAN) && hasFlyway());
        }
    }

    /** Whether Spring Boot made a Flyway (our callback is a bean whenever Flyway is on the class path). */
    private boolean hasFlyway() {
        return beans.getBeanNamesForType(org.flywaydb.core.Flyway.class, false, false).length > 0;
    }

    /**
     * Warms up, before the application takes traffic, the lock client (its own code paths and the
     * backend's: connections, scripts, statements; see docs/warm-up.md) and the fenced-write beans of
     * the stores on the class path, so that the first request does not pay for them. A warm-up that
     * fails is logged and startup goes on: the first real call then pays, and reports, the same failure.
     */
    private void warmUp(LockBackend backend) {
        ClassLoader loader = getClass().getClassLoader();
        attempt("the lock client", () -> {
            LockClient client = beans.getBeanProvider(LockClient.class).getIfUnique();
            if (client != null) {
                client.warmUp();
            } else if (backend != null) {
                backend.warmUp(WARM_UP_TIMEOUT).toCompletableFuture().join();
            }
        });
        if (ClassUtils.isPresent("dev.fenceguard.redis.FencedRedis", loader)) {
            attempt("fenced Redis writes", () -> RedisWrites.warmUp(beans));
        }
        if (ClassUtils.isPresent("dev.fenceguard.firestore.FencedFirestore", loader)) {
            attempt("fenced Firestore writes", () -> FirestoreWrites.warmUp(beans));
        }
    }

    private static final java.time.Duration WARM_UP_TIMEOUT = java.time.Duration.ofSeconds(10);

    private static void attempt(String what, Runnable warmUp) {
        try {
            warmUp.run();
        } catch (RuntimeException e) {
            Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
            // An exception fence-guard did not compose (an application backend's, a driver's) is named by
            // its class only: its message may quote data.
            LOG.warn("fence-guard could not warm up {} at startup; the first call will pay for it: {}", what,
                    dev.fenceguard.core.internal.Redacted.describe(cause));
        }
    }

    /** Loaded only when fence-guard-redis is on the class path. */
    private static final class RedisWrites {
        static void warmUp(ConfigurableListableBeanFactory beans) {
            beans.getBeanProvider(dev.fenceguard.redis.FencedRedis.class).ifUnique(dev.fenceguard.redis.FencedRedis::warmUp);
        }
    }

    /** Loaded only when fence-guard-firestore is on the class path. */
    private static final class FirestoreWrites {
        static void warmUp(ConfigurableListableBeanFactory beans) {
            beans.getBeanProvider(dev.fenceguard.firestore.FencedFirestore.class).ifUnique(dev.fenceguard.firestore.FencedFirestore::warmUp);
        }
    }

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FenceGuardStartup.class);
}
