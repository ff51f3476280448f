package dev.fenceguard.jpa;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the {@code Boolean} (or {@code boolean}) attribute of an entity that says its row is deleted:
 * a fenced delete sets it and keeps the row with its fence, so that a zombie's upsert under an older
 * fence cannot bring the row back. Read by {@link FencedEntity#of(Class)} and by the Spring Data
 * repository fragments. Map the column {@code @Column(updatable = false)}, as the fence's (see {@link Fence}):
 * otherwise Hibernate's flush of an instance loaded before a fenced delete writes its old flag and
 * brings the row back; a definition whose tombstone Hibernate's flush writes is refused when bound. Your
 * queries should leave out rows where it is {@code true}
 * ({@code where e.deleted is not true}). Do not hide tombstones with an entity-wide filter such as
 * Hibernate's {@code @SQLRestriction}: fence-guard's own statements must see them.
 *
 * @since 0.1
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.FIELD, ElementType.METHOD})
public @interface Tombstone {}
