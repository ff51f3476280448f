package dev.fenceguard.spring.boot.autoconfigure;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.migrations.FenceGuardMigrations;
import javax.sql.DataSource;
import org.flywaydb.core.api.callback.Callback;
import org.flywaydb.core.api.callback.Context;
import org.flywaydb.core.api.callback.Event;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * Makes Spring Boot's own Flyway run create or upgrade the lock table: a Flyway {@link Callback} bean
 * (Spring Boot adds every one to its Flyway) that, after the application's migrations, runs
 * {@link FenceGuardMigrations} on the same DataSource with {@code fence-guard.jdbc.schema/table}: the
 * PostgreSQL or the MariaDB/MySQL lock table, whichever database Flyway's DataSource is to.
 *
 * <p>The lock table keeps its own Flyway history table ({@link FenceGuardMigrations#historyTable}) rather
 * than joining the application's version sequence: fence-guard's migrations start at V1, which nearly
 * every application already has, and Flyway refuses two migrations with one version.
 *
 * <p>Applies when Flyway, spring-boot-flyway and fence-guard-migrations are on the class path, the
 * application has one DataSource and no {@link LockBackend} of its own, {@code spring.flyway.enabled} and
 * {@code fence-guard.jdbc.flyway} are not false, and {@code fence-guard.backend} is unset or
 * {@code jdbc}.
 *
 * @since 0.1
 */
@AutoConfiguration(before = FenceGuardAutoConfiguration.class,
        afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnClass({FenceGuardJdbc.class, FenceGuardMigrations.class, Callback.class, FlywayAutoConfiguration.class})
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnMissingBean(LockBackend.class)
@ConditionalOnBooleanProperty(name = "spring.flyway.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "fence-guard.jdbc.flyway", matchIfMissing = true)
@ConditionalOnProperty(name = "fence-guard.backend", havingValue = "jdbc", matchIfMissing = true)
@EnableConfigurationProperties(FenceGuardProperties.class)
public final class FenceGuardFlywayAutoConfiguration {

    FenceGuardFlywayAutoConfiguration() {}

    static final String CALLBACK_BEAN = "fenceGuardFlywayCallback";

    @Bean(CALLBACK_BEAN)
    Callback fenceGuardFlywayCallback(FenceGuardProperties properties) {
        return new LockTableCallback(properties.getJdbc());
    }

    /** Runs the lock-table migrations after Flyway has migrated the application's schema. */
    static final class LockTableCallback implements Callback {
        private final FenceGuardProperties.Jdbc settings;

        LockTableCallback(FenceGuardProperties.Jdbc settings) {
            this.settings = settings;
        }

        @Override
        public boolean supports(Event event, Context context) {
            return event == Event.AFTER_MIGRATE;
        }

        @Override
        public boolean canHandleInTransaction(Event event, Context context) {
            return true;
        }

        @Override
        public void handle(Event event, Context context) {
            DataSource dataSource = context.getConfiguration().getDataSource();
            // Refuses a database fence-guard has no lock table for, naming it, before migrating anything.
            String schema = JdbcDatabases.resolve(dataSource, settings).schema(settings);
            FenceGuardMigrations.builder(dataSource).withSchema(schema).withTable(settings.getTable()).migrate();
        }

        @Override
        public String getCallbackName() {
            return "fence-guard lock table";
        }
    }
}
