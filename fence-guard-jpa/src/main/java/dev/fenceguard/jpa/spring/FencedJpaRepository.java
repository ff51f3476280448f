package dev.fenceguard.jpa.spring;

/**
 * A Spring Data JPA repository fragment: fenced writes for any repository that extends it, beside
 * the repository's own methods, so that a team wraps its existing writes without rewriting them.
 *
 * <pre>{@code
 * interface OrderRepository extends JpaRepository<Order, Long>, FencedJpaRepository<Order, Long> {}
 * }</pre>
 *
 * <pre>{@code
 * orders.fencedUpdate(42L, lease.fence(), Map.of("status", "paid")).orThrow();   // orders: an OrderRepository
 * }</pre>
 *
 * <p>The implementation comes with fence-guard-jpa ({@code META-INF/spring.factories}); nothing to
 * configure. The entity names its fence with {@link dev.fenceguard.jpa.Fence} and, for deletes, its
 * tombstone with {@link dev.fenceguard.jpa.Tombstone}. Each method is the write of the same name of
 * {@link dev.fenceguard.jpa.FencedEntityWriter}, on the repository's shared {@code EntityManager}, in
 * the caller's transaction or, if there is none, in one of its own (from the application's one
 * {@code PlatformTransactionManager}).
 *
 * @param <T> the entity type
 * @param <ID> the id type
 * @since 0.1
 */
public interface FencedJpaRepository<T, ID> extends FencedRepository<T, ID> {}
