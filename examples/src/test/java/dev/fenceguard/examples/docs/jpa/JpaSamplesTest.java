package dev.fenceguard.examples.docs.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.testkit.servers.TestPostgres;
import jakarta.persistence.EntityManagerFactory;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;
import org.springframework.orm.jpa.vendor.HibernateJpaVendorAdapter;
import org.springframework.transaction.annotation.EnableTransactionManagement;

/**
 * Runs the JPA and Spring Data JPA samples of docs/jpa.md and of the Javadoc of FencedJpaRepository in a
 * plain Spring context with Hibernate, on a schema of its own (leases from an in-memory lock backend).
 */
class JpaSamplesTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration WAIT = Duration.ofSeconds(5);

    private static TestPostgres.Schema schema;
    private static AnnotationConfigApplicationContext spring;
    private final LockClient locks = LockClient.of(new InMemoryLockBackend());

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    @EnableJpaRepositories(basePackageClasses = Order.class, considerNestedRepositories = true)
    static class JpaConfig {
        @Bean
        LocalContainerEntityManagerFactoryBean entityManagerFactory(DataSource dataSource) {
            LocalContainerEntityManagerFactoryBean f = new LocalContainerEntityManagerFactoryBean();
            f.setDataSource(dataSource);
            f.setPackagesToScan(Order.class.getPackageName());
            f.setJpaVendorAdapter(new HibernateJpaVendorAdapter());
            return f;
        }

        @Bean
        JpaTransactionManager transactionManager(EntityManagerFactory emf) {
            return new JpaTransactionManager(emf);
        }

        @Bean
        OrderService orderService() {
            return new OrderService();
        }
    }

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("jpasamples");
        schema.execute("CREATE TABLE " + schema.name() + ".orders (id BIGINT PRIMARY KEY, status TEXT, fence_token BIGINT, "
                + "deleted BOOLEAN, version BIGINT)");
        spring = new AnnotationConfigApplicationContext();
        spring.registerBean(DataSource.class, schema::dataSource);   // its connections have the schema on their search path
        spring.register(JpaConfig.class);
        spring.refresh();
    }

    @AfterAll
    static void tearDown() {
        spring.close();
        schema.close();
    }

    @BeforeEach
    void newOrder() {
        schema.execute("DELETE FROM " + schema.name() + ".orders");
        schema.execute("INSERT INTO " + schema.name() + ".orders VALUES (42, 'new', 0, false, 0)");
    }

    private String order() {
        return schema.query("SELECT status, fence_token, deleted FROM " + schema.name() + ".orders WHERE id = 42").getFirst();
    }

    @Test
    void markPaidWritesWithTheLeasesFenceAndRefusesAnOlderOne() throws Exception {
        OrderService service = spring.getBean(OrderService.class);
        Lease older = locks.acquire("orders:42", TTL, WAIT).orElseThrow();
        older.close();
        try (Lease lease = locks.acquire("orders:42", TTL, WAIT).orElseThrow()) {
            service.markPaid(42L, lease);
            assertThat(order()).isEqualTo("paid|" + lease.fence().value() + "|f");
        }
        assertThatThrownBy(() -> service.markPaid(42L, older)).isInstanceOf(StaleFenceException.class);
    }

    @Test
    void theDefinitionByAttributeNamesWritesTheSameRow() throws Exception {
        OrderService service = new OrderService();   // its fields, not a proxy's
        try (Lease lease = locks.acquire("orders:42", TTL, WAIT).orElseThrow()) {
            service.byName.on(spring.getBean(EntityManagerFactory.class)).update(42L, lease.fence(), Map.of("status", "by name")).orThrow();
            assertThat(order()).isEqualTo("by name|" + lease.fence().value() + "|f");
        }
    }

    @Test
    void shipSavesTheLoadedAndChangedInstanceFenced() throws Exception {
        try (Lease lease = locks.acquire("orders:42", TTL, WAIT).orElseThrow()) {
            spring.getBean(OrderService.class).ship(42L, lease);
            assertThat(order()).isEqualTo("shipped|" + lease.fence().value() + "|f");
        }
    }

    @Test
    void theRepositoryFragmentWritesEachWayAndEndsWithATombstone() throws Exception {
        JpaRepositorySamples.OrderRepository orders = spring.getBean(JpaRepositorySamples.OrderRepository.class);
        Order order = new Order();
        order.id = 42L;
        order.status = "saved";
        try (Lease lease = locks.acquire("orders:42", TTL, WAIT).orElseThrow()) {
            JpaRepositorySamples.writes(orders, order, lease);
            assertThat(order()).isEqualTo("saved|" + lease.fence().value() + "|t");
            assertThat(orders.findById(42L)).as("the repository's own methods are there too").isPresent();
        }
    }

    @Test
    void theJavadocRepositoryUpdatesFenced() throws Exception {
        try (Lease lease = locks.acquire("orders:42", TTL, WAIT).orElseThrow()) {
            JpaRepositorySamples.Javadoc.update(spring.getBean(JpaRepositorySamples.Javadoc.OrderRepository.class), lease);
            assertThat(order()).isEqualTo("paid|" + lease.fence().value() + "|f");
        }
    }
}
