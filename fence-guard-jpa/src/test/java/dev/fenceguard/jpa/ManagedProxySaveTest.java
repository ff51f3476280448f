package dev.fenceguard.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import jakarta.persistence.EntityManager;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Second reader's check of #26 item 1 with an instance from {@code getReference} (a Hibernate proxy):
 * {@code save} writes "the entity's state", as a repository's save would. A proxy's state is that of
 * the instance behind it, never the proxy object's own (unset) fields.
 */
class ManagedProxySaveTest {

    private static final JpaTestSupport DB = new JpaTestSupport("jpaproxy", List.of(Shipment.DDL), Shipment.class);
    private static final FencedEntity<Shipment> SHIPMENTS = FencedEntity.builder(Shipment.class).withMetrics(LockMetrics.none()).build();

    @AfterAll
    static void close() {
        DB.close();
    }

    @Test
    void aFencedSaveOfAReferenceWritesTheEntitysStateNotTheProxysEmptyFields() {
        String id = "r-" + UUID.randomUUID();
        DB.exec("INSERT INTO shipments (id, status, items, fence_token) VALUES ('" + id + "', 'kept', 7, 10)");
        try (EntityManager em = DB.emf.createEntityManager()) {
            em.getTransaction().begin();
            Shipment ref = em.getReference(Shipment.class, id);
            assertThat(SHIPMENTS.on(em).save(ref, FenceToken.of(20)).isApplied()).isTrue();
            em.getTransaction().commit();
        }
        assertThat(DB.one("SELECT status, items, fence_token FROM shipments WHERE id = '" + id + "'")).isEqualTo("kept|7|20");
    }
}
