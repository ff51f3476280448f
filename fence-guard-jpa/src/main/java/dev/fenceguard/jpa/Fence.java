package dev.fenceguard.jpa;

import dev.fenceguard.core.FencePolicy;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the attribute of an entity that holds its fence: a {@code Long} (or {@code long}) for a
 * {@code BIGINT} column, or a {@code String} for the 15-digit text form in a {@code CHAR(15)} column.
 * Read by {@link FencedEntity#of(Class)} and by the Spring Data repository fragments.
 *
 * <pre>{@code
 * @Entity
 * @Table(name = "orders")        // "order" is an SQL keyword
 * class Order {
 *     @Id Long id;
 *     String status;
 *     @Fence @Column(name = "fence_token", updatable = false) Long fenceToken;
 *     @Tombstone @Column(updatable = false) Boolean deleted;
 * }
 * }</pre>
 *
 * <p>The column must be mapped {@code updatable = false}: Hibernate's own flush of a changed instance
 * writes every updatable column, and would put the old fence an instance was loaded with back over a
 * newer one. fence-guard's statements still write it; a definition whose fence Hibernate's flush writes
 * is refused when bound ({@link FencedEntity#on}). Your own code should not set the attribute:
 * fence-guard's writes set it, in the same statement as the data they change.
 *
 * @since 0.1
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.FIELD, ElementType.METHOD})
public @interface Fence {

    /** The write rule of the entity's fenced writes; default {@link FencePolicy#SAME_OR_NEWER}. */
    FencePolicy policy() default FencePolicy.SAME_OR_NEWER;
}
