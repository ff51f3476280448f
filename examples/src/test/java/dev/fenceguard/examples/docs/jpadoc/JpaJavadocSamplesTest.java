package dev.fenceguard.examples.docs.jpadoc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.jpa.FencedEntity;
import dev.fenceguard.testkit.servers.TestPostgres;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.jpa.HibernatePersistenceConfiguration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Runs the samples in the Javadoc of Fence and FencedEntity with plain Hibernate, on a schema of its own. */
class JpaJavadocSamplesTest {

    private static TestPostgres.Schema schema;
    private static EntityManagerFactory emf;

    @BeforeAll
    static void setUp() {
        schema = TestPostgres.server().newSchema("jpadocsamples");
        schema.execute("CREATE TABLE " + schema.name() + ".orders (id BIGINT PRIMARY KEY, status TEXT, fence_token BIGINT, deleted BOOLEAN)");
        schema.execute("INSERT INTO " + schema.name() + ".orders VALUES (42, 'new', 0, false)");
        emf = new HibernatePersistenceConfiguration("fg-jpadocsamples").managedClass(Order.class)
                .property(AvailableSettings.JAKARTA_NON_JTA_DATASOURCE, schema.dataSource()).createEntityManagerFactory();
    }

    @AfterAll
    static void tearDown() {
        emf.close();
        schema.close();
    }

    private String order() {
        return schema.query("SELECT status, fence_token FROM " + schema.name() + ".orders WHERE id = 42").getFirst();
    }

    @Test
    void theAnnotatedEntityIsWrittenFencedByEitherDefinition() throws Exception {
        LockClient locks = LockClient.of(new InMemoryLockBackend());
        List<FencedEntity<Order>> definitions;
        try (Lease lease = locks.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow();
                EntityManager entityManager = emf.createEntityManager()) {
            entityManager.getTransaction().begin();
            definitions = JpaJavadocSamples.update(entityManager, lease);
            entityManager.getTransaction().commit();
            assertThat(order()).isEqualTo("paid|" + lease.fence().value());
        }
        try (Lease lease = locks.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow()) {
            definitions.get(1).on(emf).update(42L, lease.fence(), Map.of("status", "by name")).orThrow();
            assertThat(order()).isEqualTo("by name|" + lease.fence().value());
        }
    }
}
