package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.spi.LockBackend;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/**
 * What fence-guard does once every singleton exists (so after Spring Boot's Flyway has run) and before
 * the application takes traffic: checks the PostgreSQL lock table, and is the one place where the lock
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
        if (!properties.getPostgresql().isVerifyTable() || !beans.containsBean("fenceGuardPostgresLockTable")) {
            return;
        }
        PostgresLockTable table = beans.getBean("fenceGuardPostgresLockTable", PostgresLockTable.class);
        if (table.built(backend)) {
            table.verify(beans.containsBean(FenceGuardFlywayAutoConfiguration.CALLBACK_BEAN) && hasFlyway());
        }
    }

    /** Whether Spring Boot made a Flyway (our callback is a bean whenever Flyway is on the class path). */
    private boolean hasFlyway() {
        return beans.getBeanNamesForType(org.flywaydb.core.Flyway.class, false, false).length > 0;
    }

    /**
     * WARM-UP: the single place where fence-guard warms up, before the application takes traffic. Once
     * lock backends and fenced writers have {@code warmUp()} (issue #20 item 5), call it here on
     * {@code backend} and on the fenced-write beans ({@code FencedRedis}, {@code FencedFirestore},
     * {@code TransactionalFencedWrites}) that exist in {@link #beans}.
     */
    private void warmUp(LockBackend backend) {
        // Nothing to warm up yet: see the Javadoc.
    }
}
