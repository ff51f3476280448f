package dev.fenceguard.examples.docs.jpadoc;

import dev.fenceguard.core.Lease;
import dev.fenceguard.jpa.FencedEntity;
import jakarta.persistence.EntityManager;
import java.util.List;
import java.util.Map;

/** The sample in the Javadoc of FencedEntity. */
final class JpaJavadocSamples {

    private JpaJavadocSamples() {}

    /** In a transaction {@code entityManager} has joined. */
    static List<FencedEntity<Order>> update(EntityManager entityManager, Lease lease) {
        // dev/fenceguard/jpa/FencedEntity.java: by annotation or by name (begin)
        FencedEntity<Order> orders = FencedEntity.of(Order.class);          // @Fence, @Tombstone on the entity
        // or by attribute name, for entities you cannot annotate
        FencedEntity<Order> byName = FencedEntity.builder(Order.class)
                .withFenceAttribute("fenceToken").withTombstoneAttribute("deleted").build();

        orders.on(entityManager).update(42L, lease.fence(), Map.of("status", "paid")).orThrow();
        // dev/fenceguard/jpa/FencedEntity.java: by annotation or by name (end)
        return List.of(orders, byName);
    }
}
