package dev.fenceguard.jpa.spring;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import java.util.Map;

/**
 * The fenced writes a repository gains from {@link FencedJpaRepository} (Spring Data JPA) or
 * {@link FencedJdbcRepository} (Spring Data JDBC); extend one of those, not this. Each returns a
 * {@link WriteOutcome}: {@code Applied}, {@code Stale(current fence)} or {@code NotFound}. Values are
 * given by attribute (property) name, {@code Map.of("status", "paid")}, and checked before any
 * statement.
 *
 * @param <T> the entity type
 * @param <ID> the id type
 * @since 0.1
 */
public interface FencedRepository<T, ID> {

    /**
     * Fenced update of a live row that is not a tombstone.
     *
     * @throws IllegalArgumentException if an argument is invalid (before any statement)
     * @throws FenceGuardException if the database fails the write
     */
    WriteOutcome fencedUpdate(ID id, FenceToken fence, Map<String, ?> values);

    /**
     * Fenced create-or-replace: a tombstone counts like a row.
     *
     * @throws IllegalArgumentException if an argument is invalid (before any statement)
     * @throws FenceGuardException if the database fails the write
     */
    WriteOutcome fencedUpsert(ID id, FenceToken fence, Map<String, ?> values);

    /**
     * Fenced save of {@code entity}'s state (its id and its own columns, but the fence, tombstone and
     * version): the repository's {@code save}, refused for a stale fence. A fenced create-or-replace, so a
     * tombstone counts like a row. {@code entity}'s values are not changed (a managed instance is refreshed
     * after the write, see {@code FencedEntityWriter}). Entities with associations or
     * embeddables (JPA) or embedded properties (JDBC) are refused; child tables are not written.
     *
     * @throws IllegalArgumentException if {@code entity} has no id, or a shape a save cannot write (before any statement)
     * @throws IllegalStateException on JPA, if the row's managed instance has pending changes no fenced statement can
     *     carry (an association, embeddable, collection or subclass attribute), before any statement
     * @throws FenceGuardException if the database fails the write
     */
    WriteOutcome fencedSave(T entity, FenceToken fence);

    /**
     * Records the fence without changing the data (claim, then read, then write); on JPA, pending changes
     * of the row's managed instance are written by the claim, under its fence.
     *
     * @throws IllegalArgumentException if an argument is invalid (before any statement)
     * @throws FenceGuardException if the database fails the write
     */
    WriteOutcome fencedClaim(ID id, FenceToken fence);

    /**
     * Fenced delete that keeps a tombstone, so that a stale upsert cannot bring the row back.
     *
     * @throws IllegalStateException if the entity has no {@link dev.fenceguard.jpa.Tombstone} attribute
     * @throws IllegalArgumentException if an argument is invalid (before any statement)
     * @throws FenceGuardException if the database fails the write
     */
    WriteOutcome fencedDelete(ID id, FenceToken fence);
}
