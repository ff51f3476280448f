package dev.fenceguard.jpa.spring;

import dev.fenceguard.jpa.spring.jdbcrepo.CrateRepository;
import dev.fenceguard.jpa.spring.jparepo.ParcelRepository;
import dev.fenceguard.testkit.servers.TestPostgres;
import jakarta.persistence.EntityManagerFactory;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.resource.jdbc.spi.StatementInspector;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.jdbc.repository.config.AbstractJdbcConfiguration;
import org.springframework.data.jdbc.repository.config.EnableJdbcRepositories;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcOperations;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;
import org.springframework.orm.jpa.vendor.HibernateJpaVendorAdapter;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/** A schema of its own with the given tables, and a Spring application context on it: JPA or JDBC repositories. */
final class SpringContexts implements AutoCloseable {

    final TestPostgres.Schema schema;
    final AnnotationConfigApplicationContext spring;
    final TransactionTemplate tx;
    /** A transaction of its own, the caller's suspended meanwhile: a successor's write beside a zombie's transaction. */
    final TransactionTemplate newTx;
    /** The SQL text of every statement Hibernate prepares in the JPA contexts, in order. */
    static final List<String> JPA_SQL = new CopyOnWriteArrayList<>();

    private SpringContexts(String prefix, Class<?> config, String... ddl) {
        schema = TestPostgres.server().newSchema(prefix);
        for (String statement : ddl) {
            schema.execute("SET search_path TO " + schema.name() + "; " + statement);
        }
        spring = new AnnotationConfigApplicationContext();
        spring.registerBean(DataSource.class, schema::dataSource); // its connections have the schema on their search path
        spring.register(config);
        spring.refresh();
        tx = new TransactionTemplate(spring.getBean(PlatformTransactionManager.class));
        newTx = new TransactionTemplate(spring.getBean(PlatformTransactionManager.class));
        newTx.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
    }

    /** Spring Data JPA (Hibernate) with the repositories of {@link ParcelRepository}'s package. */
    static SpringContexts jpa(String prefix, String... ddl) {
        return new SpringContexts(prefix, JpaConfig.class, ddl);
    }

    /** Spring Data JDBC with the repositories of {@link CrateRepository}'s package. */
    static SpringContexts jdbc(String prefix, String... ddl) {
        return new SpringContexts(prefix, JdbcConfig.class, ddl);
    }

    <T> T bean(Class<T> type) {
        return spring.getBean(type);
    }

    /** One row of {@code sql}, columns joined by {@code |}; null if none. */
    String one(String sql) {
        List<String> rows = schema.query(sql);
        return rows.isEmpty() ? null : rows.getFirst();
    }

    @Override
    public void close() {
        spring.close();
        schema.close();
    }

    @Configuration
    @EnableJpaRepositories(basePackageClasses = ParcelRepository.class)
    static class JpaConfig {
        @Bean
        LocalContainerEntityManagerFactoryBean entityManagerFactory(DataSource dataSource) {
            LocalContainerEntityManagerFactoryBean f = new LocalContainerEntityManagerFactoryBean();
            f.setDataSource(dataSource);
            f.setPackagesToScan(ParcelRepository.class.getPackageName());
            f.setJpaVendorAdapter(new HibernateJpaVendorAdapter());
            f.getJpaPropertyMap().put(AvailableSettings.STATEMENT_INSPECTOR, (StatementInspector) sql -> {
                JPA_SQL.add(sql);
                return sql;
            });
            return f;
        }

        @Bean
        JpaTransactionManager transactionManager(EntityManagerFactory emf) {
            return new JpaTransactionManager(emf);
        }
    }

    @Configuration
    @EnableJdbcRepositories(basePackageClasses = CrateRepository.class)
    static class JdbcConfig extends AbstractJdbcConfiguration {
        @Bean
        NamedParameterJdbcOperations namedParameterJdbcOperations(DataSource dataSource) {
            return new NamedParameterJdbcTemplate(dataSource);
        }

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }
}
