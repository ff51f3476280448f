package dev.fenceguard.examples.docs.jpa;

import dev.fenceguard.core.Lease;
import dev.fenceguard.jpa.spring.FencedJpaRepository;
import java.util.Map;
import org.springframework.data.jpa.repository.JpaRepository;

/** The Spring Data JPA samples of docs/jpa.md and of the Javadoc of FencedJpaRepository (nested repositories). */
final class JpaRepositorySamples {

    private JpaRepositorySamples() {}

    // docs/jpa.md: repository (begin)
    interface OrderRepository extends JpaRepository<Order, Long>, FencedJpaRepository<Order, Long> {}
    // docs/jpa.md: repository (end)

    static void writes(OrderRepository orders, Order order, Lease lease) {
        // docs/jpa.md: repository writes (begin)
        // orders: the OrderRepository
        orders.fencedUpdate(42L, lease.fence(), Map.of("status", "paid")).orThrow();
        orders.fencedUpsert(42L, lease.fence(), Map.of("status", "new"));
        orders.fencedSave(order, lease.fence());                  // instead of orders.save(order)
        orders.fencedClaim(42L, lease.fence());
        orders.fencedDelete(42L, lease.fence());
        // docs/jpa.md: repository writes (end)
    }

    /** The Javadoc's repository: the same declaration, in a class of its own. */
    static final class Javadoc {
        private Javadoc() {}

        // dev/fenceguard/jpa/spring/FencedJpaRepository.java: repository (begin)
        interface OrderRepository extends JpaRepository<Order, Long>, FencedJpaRepository<Order, Long> {}
        // dev/fenceguard/jpa/spring/FencedJpaRepository.java: repository (end)

        static void update(OrderRepository orders, Lease lease) {
            // dev/fenceguard/jpa/spring/FencedJpaRepository.java: fenced update (begin)
            orders.fencedUpdate(42L, lease.fence(), Map.of("status", "paid")).orThrow();   // orders: an OrderRepository
            // dev/fenceguard/jpa/spring/FencedJpaRepository.java: fenced update (end)
        }
    }
}
