package dev.fenceguard.examples.docs.jdbcrepo;

import dev.fenceguard.core.Lease;
import dev.fenceguard.jpa.Fence;
import dev.fenceguard.jpa.Tombstone;
import dev.fenceguard.jpa.spring.FencedJdbcRepository;
import java.util.Map;
import org.springframework.data.annotation.Id;
import org.springframework.data.relational.core.mapping.Column;
import org.springframework.data.relational.core.mapping.Table;
import org.springframework.data.repository.CrudRepository;

/** The Spring Data JDBC samples of docs/jpa.md and of the Javadoc of FencedJdbcRepository (nested aggregate and repositories). */
final class JdbcRepositorySamples {

    private JdbcRepositorySamples() {}

    // docs/jpa.md: aggregate and repository (begin)
    @Table("orders")
    record Order(@Id Long id, String status, @Fence @Column("fence_token") Long fenceToken, @Tombstone Boolean deleted) {}

    interface OrderRepository extends CrudRepository<Order, Long>, FencedJdbcRepository<Order, Long> {}
    // docs/jpa.md: aggregate and repository (end)

    /** The Javadoc's repository: the same declaration, in a class of its own. */
    static final class Javadoc {
        private Javadoc() {}

        // dev/fenceguard/jpa/spring/FencedJdbcRepository.java: repository (begin)
        interface OrderRepository extends CrudRepository<Order, Long>, FencedJdbcRepository<Order, Long> {}
        // dev/fenceguard/jpa/spring/FencedJdbcRepository.java: repository (end)

        static void update(OrderRepository orders, Lease lease) {
            // dev/fenceguard/jpa/spring/FencedJdbcRepository.java: fenced update (begin)
            orders.fencedUpdate(42L, lease.fence(), Map.of("status", "paid")).orThrow();   // orders: an OrderRepository
            // dev/fenceguard/jpa/spring/FencedJdbcRepository.java: fenced update (end)
        }
    }
}
