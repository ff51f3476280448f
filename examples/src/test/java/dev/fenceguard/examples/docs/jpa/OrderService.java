package dev.fenceguard.examples.docs.jpa;

import dev.fenceguard.core.Lease;
import dev.fenceguard.jpa.FencedEntity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import java.util.Map;
import org.springframework.transaction.annotation.Transactional;

/** The samples of docs/jpa.md, "Writes" and "The persistence context": a Spring bean on the shared EntityManager. */
class OrderService {

    @PersistenceContext
    private EntityManager entityManager;

    // docs/jpa.md: writes (begin)
    FencedEntity<Order> orders = FencedEntity.of(Order.class);        // immutable; build once
    // or, for an entity you cannot annotate:
    FencedEntity<Order> byName = FencedEntity.builder(Order.class)
            .withFenceAttribute("fenceToken").withTombstoneAttribute("deleted").build();

    @Transactional
    void markPaid(long id, Lease lease) {
        orders.on(entityManager).update(id, lease.fence(), Map.of("status", "paid")).orThrow();
    }
    // docs/jpa.md: writes (end)

    // docs/jpa.md: persistence context (begin)
    @Transactional
    void ship(long id, Lease lease) {
        Order order = entityManager.find(Order.class, id);
        order.status = "shipped";
        orders.on(entityManager).save(order, lease.fence()).orThrow();   // or repository.fencedSave(order, fence)
    }
    // docs/jpa.md: persistence context (end)
}
