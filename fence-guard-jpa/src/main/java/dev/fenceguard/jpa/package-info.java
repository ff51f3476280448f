/**
 * Fenced writes for JPA entities (Hibernate ORM 7): {@link dev.fenceguard.jpa.FencedEntity} and its
 * {@link dev.fenceguard.jpa.FencedEntityWriter}, and the {@link dev.fenceguard.jpa.Fence} and
 * {@link dev.fenceguard.jpa.Tombstone} annotations. Spring Data repository fragments are in
 * {@code dev.fenceguard.jpa.spring}.
 *
 * @since 0.1
 */
package dev.fenceguard.jpa;
