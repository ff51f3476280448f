package dev.fenceguard.jpa.spring;

/**
 * A Spring Data JDBC repository fragment: fenced writes for any repository that extends it, beside
 * the repository's own methods, so that a team wraps its existing writes without rewriting them.
 *
 * <pre>{@code
 * interface OrderRepository extends CrudRepository<Order, Long>, FencedJdbcRepository<Order, Long> {}
 * }</pre>
 *
 * <pre>{@code
 * orders.fencedUpdate(42L, lease.fence(), Map.of("status", "paid")).orThrow();   // orders: an OrderRepository
 * }</pre>
 *
 * <p>The implementation comes with fence-guard-jpa ({@code META-INF/spring.factories}) and needs
 * fence-guard-jdbc on the class path: each write is the write of the same name of
 * {@code dev.fenceguard.jooq.FencedWriter}, on the table, id column and columns the aggregate's mapping
 * names, its fence marked {@link dev.fenceguard.jpa.Fence} and, for deletes, its tombstone
 * {@link dev.fenceguard.jpa.Tombstone}. Values are given by property name. It runs on the connection of
 * the caller's Spring transaction if there is one (so it commits or rolls back with it), else on a
 * connection of its own, committed before it returns. PostgreSQL only, as {@code FencedTable} is.
 * Aggregates with a {@code @Version} property are refused: these writes cannot raise it.
 *
 * @param <T> the entity type
 * @param <ID> the id type
 * @since 0.1
 */
public interface FencedJdbcRepository<T, ID> extends FencedRepository<T, ID> {}
