package dev.fenceguard.examples.docs.jdbcrepo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.testkit.servers.TestPostgres;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.jdbc.repository.config.AbstractJdbcConfiguration;
import org.springframework.data.jdbc.repository.config.EnableJdbcRepositories;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcOperations;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

/** Runs the Spring Data JDBC samples of docs/jpa.md and of the Javadoc of FencedJdbcRepository, on a schema of its own. */
class JdbcRepositorySamplesTest {

    private static TestPostgres.Schema schema;
    private static AnnotationConfigApplicationContext spring;

    @Configuration(proxyBeanMethods = false)
    @EnableJdbcRepositories(basePackageClasses = JdbcRepositorySamples.class, considerNestedRepositories = true)
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

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("jdbcreposamples");
        schema.execute("CREATE TABLE " + schema.name() + ".orders (id BIGINT PRIMARY KEY, status TEXT, fence_token BIGINT, deleted BOOLEAN)");
        schema.execute("INSERT INTO " + schema.name() + ".orders VALUES (42, 'new', 0, false)");
        spring = new AnnotationConfigApplicationContext();
        DataSource dataSource = schema.dataSource();   // its connections have the schema on their search path
        spring.registerBean(DataSource.class, () -> dataSource);
        spring.register(JdbcConfig.class);
        spring.refresh();
    }

    @AfterAll
    static void tearDown() {
        spring.close();
        schema.close();
    }

    private String order() {
        return schema.query("SELECT status, fence_token, deleted FROM " + schema.name() + ".orders WHERE id = 42").getFirst();
    }

    @Test
    void bothRepositoriesWriteTheAggregateFencedAndTheOlderFenceIsStale() throws Exception {
        LockClient locks = LockClient.of(new InMemoryLockBackend());
        JdbcRepositorySamples.OrderRepository orders = spring.getBean(JdbcRepositorySamples.OrderRepository.class);
        Lease older = locks.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow();
        older.close();
        try (Lease lease = locks.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow()) {
            JdbcRepositorySamples.Javadoc.update(spring.getBean(JdbcRepositorySamples.Javadoc.OrderRepository.class), lease);
            assertThat(order()).isEqualTo("paid|" + lease.fence().value() + "|f");
            assertThat(orders.findById(42L)).hasValueSatisfying(o -> assertThat(o.status()).isEqualTo("paid"));
        }
        assertThat(orders.fencedUpdate(42L, older.fence(), Map.of("status", "zombie"))).as("the docs' repository, an older fence")
                .isInstanceOf(dev.fenceguard.core.WriteOutcome.Stale.class);
        assertThat(order()).startsWith("paid|");
    }
}
