package dev.fenceguard.jpa;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jpa.internal.EntityMapping;
import dev.fenceguard.jpa.internal.JpaErrors;
import dev.fenceguard.jpa.internal.JpaTarget;
import dev.fenceguard.jpa.internal.ManagedRow;
import jakarta.persistence.EntityManager;
import jakarta.persistence.Query;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Fenced writes to one {@link FencedEntity}, on one entity manager or factory (see
 * {@link FencedEntity#on}). Every write returns a {@link WriteOutcome}: {@code Applied},
 * {@code Stale(current fence)} or {@code NotFound}. A write that is applied takes one statement; only
 * one that is not takes a second (a read that tells {@code Stale} from {@code NotFound}), and a delete
 * or claim of an id that has no row a third (the tombstone row). A write that meets a concurrent change
 * of its row between those statements runs them again, a few times at most.
 *
 * <p>Values are given by attribute name, {@code Map.of("status", "paid")}, and are checked against the
 * metamodel before any statement: an unknown attribute, a collection, the id, fence, tombstone or
 * {@code @Version} attribute, or a value of the wrong type is an {@link IllegalArgumentException}.
 * Writes on a caller's entity manager need a transaction (an {@link IllegalStateException} otherwise,
 * also before any statement). Database errors are {@link FenceGuardException}s with a code mapped from
 * the SQLSTATE, and messages that never quote row contents.
 *
 * <p><b>The persistence context.</b> On a caller's entity manager, the instance of the written row it
 * manages, if any, never reaches the row by a plain flush. Hibernate would flush its pending changes
 * ahead of the bulk statement (flush mode AUTO) with an {@code UPDATE} that checks no fence: a zombie's
 * changed instance would overwrite the successor's row before its own write is judged. So the instance
 * is held out of flushes for the write, and its pending changes to basic attributes are written by the
 * fenced statement itself, beside the values given (which win where both set an attribute): under the
 * fence, or not at all. A delete drops them; pending changes to an association, embeddable,
 * collection or subclass attribute are refused ({@link IllegalStateException}, before any statement). After the write, whatever its outcome, the
 * instance is refreshed from the row (one more read), or detached after an applied delete, so a refused
 * write's changes are not flushed at commit either. Everything else pending is flushed before the
 * statement (under flush mode AUTO, the whole persistence context, because the refresh may cascade to
 * children). Other entity managers' instances are not touched: their flush is an ordinary,
 * unfenced write, which cannot lower the fence nor revive a deleted row (neither column is updatable)
 * but can overwrite data;
 * give the entity a {@code @Version} so that theirs fail their optimistic check.
 *
 * <p>Immutable and thread-safe when built on an {@code EntityManagerFactory}; on an
 * {@code EntityManager}, as thread-safe as the entity manager (Spring's shared one is).
 *
 * @param <T> the entity type
 * @since 0.1
 */
public final class FencedEntityWriter<T> {

    /** Tries of one write whose row keeps changing between its statements; fences only rise, so few are needed. */
    private static final int MAX_ATTEMPTS = 5;

    private enum Operation {
        UPDATE, UPSERT, CLAIM, DELETE;

        final String observed = name().toLowerCase(Locale.ROOT);
        final String description = "fenced " + observed;
    }

    private final EntityMapping<T> m;
    private final JpaTarget target;

    FencedEntityWriter(EntityMapping<T> mapping, JpaTarget target) {
        this.m = mapping;
        this.target = target;
    }

    /**
     * Fenced update of a live row: {@code update E e set <values>, e.fence = :f where e.id = :id and
     * coalesce(e.fence, 0) <= :f and <not deleted>}.
     *
     * @param id the entity's id, of its id type
     * @param values attribute names and their new values; at least one
     * @return {@code Applied}; {@code Stale} with the stored fence; or {@code NotFound} if there is no row or
     *     it is a tombstone
     * @throws IllegalArgumentException if an argument is invalid (before any statement)
     * @throws IllegalStateException on a caller's entity manager without a transaction
     * @throws FenceGuardException if the database fails the write
     */
    public WriteOutcome update(Object id, FenceToken fence, Map<String, ?> values) {
        return write(Operation.UPDATE, id, fence, m.checkValues(values, true));
    }

    /**
     * Fenced create-or-replace: {@code insert .. on conflict (id) do update set .. where <rule>}. A tombstone
     * counts like a row: an older fence is {@code Stale} and the row stays deleted; an admitted fence
     * recreates it. The values must make a valid new row (the insert is checked against the table's
     * {@code NOT NULL} constraints even when the row exists).
     *
     * @return {@code Applied}, or {@code Stale} with the fence the row or tombstone holds
     * @throws IllegalArgumentException if an argument is invalid (before any statement)
     * @throws IllegalStateException on a caller's entity manager without a transaction
     * @throws FenceGuardException if the database fails the write
     */
    public WriteOutcome upsert(Object id, FenceToken fence, Map<String, ?> values) {
        return write(Operation.UPSERT, id, fence, m.checkValues(values, true));
    }

    /**
     * A fenced {@link #upsert} of {@code entity}'s state: its id, and every basic attribute but the fence,
     * tombstone and version, written whether or not the row exists, as a repository's {@code save} would.
     * {@code entity} itself is not changed (if the caller's entity manager manages it, it is never
     * flushed by Hibernate ahead of this write, and is refreshed after it whatever the outcome, like any
     * instance of a written row). Collections are not written; an entity with associations or
     * embeddables is refused.
     *
     * @return {@code Applied}, or {@code Stale} with the fence the row or tombstone holds
     * @throws IllegalArgumentException if {@code entity} is not an instance of the entity, has no id, or has
     *     associations or embeddables (before any statement)
     * @throws IllegalStateException on a caller's entity manager without a transaction
     * @throws FenceGuardException if the database fails the write
     */
    public WriteOutcome save(T entity, FenceToken fence) {
        target.requireTransaction(Operation.UPSERT.description); // before a proxy's state is loaded
        Object id = m.idOf(entity);
        return write(Operation.UPSERT, id, fence, m.checkValues(m.valuesOf(entity), false));
    }

    /**
     * Records {@code fence} on the row without changing its data, so that older fences are refused from
     * now on: claim first, then read, then write. (On a caller's entity manager whose instance of the row
     * has pending changes, those are written by the claim's statement, under its fence; see the class
     * comment.) On an entity with a tombstone attribute, a claim of an id
     * without a row leaves a tombstone holding the fence, and a claim of a tombstone raises its fence;
     * both answer {@code NotFound}.
     *
     * @return {@code Applied}; {@code Stale} with the stored fence; or {@code NotFound}
     * @throws IllegalArgumentException if an argument is invalid (before any statement)
     * @throws IllegalStateException on a caller's entity manager without a transaction
     * @throws FenceGuardException if the database fails the write
     */
    public WriteOutcome claim(Object id, FenceToken fence) {
        return write(Operation.CLAIM, id, fence, Map.of());
    }

    /**
     * Fenced delete that keeps a tombstone: {@code update E e set e.tombstone = true, e.fence = :f where
     * e.id = :id and <rule>}. Deleting a tombstone under a newer fence raises its fence. An id without a
     * row gets a tombstoned row ({@code id}, {@code fence}, tombstone {@code true}, the other columns
     * their defaults), so that a zombie's upsert under an older fence cannot create what the newer lease
     * deleted; if the table has {@code NOT NULL} columns without defaults, use
     * {@link #delete(Object, FenceToken, Map)}.
     *
     * @return {@code Applied} (the id now reads as deleted, its tombstone holding {@code fence}), or
     *     {@code Stale(stored)} and nothing changed
     * @throws IllegalStateException if the entity has no tombstone attribute, or on a caller's entity
     *     manager without a transaction
     * @throws IllegalArgumentException if an argument is invalid (before any statement)
     * @throws FenceGuardException if the database fails the write, e.g. {@code INVALID_ARGUMENT} if it
     *     refuses the tombstone row of an id that never existed
     */
    public WriteOutcome delete(Object id, FenceToken fence) {
        return delete(id, fence, Map.of());
    }

    /**
     * {@link #delete(Object, FenceToken)}, with {@code placeholder} values for the tombstone row it
     * inserts for an id that has no row (never used on an existing row).
     *
     * @throws IllegalStateException if the entity has no tombstone attribute, or on a caller's entity
     *     manager without a transaction
     * @throws IllegalArgumentException if an argument is invalid (before any statement)
     * @throws FenceGuardException if the database fails the write
     */
    public WriteOutcome delete(Object id, FenceToken fence, Map<String, ?> placeholder) {
        if (!m.hasTombstone()) {
            throw new IllegalStateException("fenced delete of " + m.name() + " needs a tombstone attribute (@Tombstone, or "
                    + "FencedEntity.Builder.withTombstoneAttribute): a hard delete would let a stale upsert bring the row back");
        }
        return write(Operation.DELETE, id, fence, m.checkValues(placeholder, false));
    }

    private WriteOutcome write(Operation op, Object id, FenceToken fence, Map<String, Object> values) {
        Object k = m.checkId(id);
        Objects.requireNonNull(fence, "fence");
        target.requireTransaction(op.description);
        String resource = m.resource(k);
        Object encoded = m.rule().encode(fence);
        return m.rule().observe(m.name(), op.observed, fence, () -> {
            try {
                return target.run(em -> {
                    // Before any statement: the caller's managed instance of this row must not be flushed
                    // by Hibernate ahead of the fenced statement; its pending changes ride in it instead.
                    ManagedRow managed = target.shared() ? ManagedRow.take(em, m, k) : ManagedRow.none();
                    Map<String, Object> all = values;
                    if (op != Operation.DELETE && !managed.pending().isEmpty()) {
                        all = new LinkedHashMap<>(managed.pending());
                        all.putAll(values); // the values given win over the instance's
                    }
                    Statements s = new Statements(em, k, encoded, new ArrayList<>(all.values()));
                    List<String> attributes = new ArrayList<>(all.keySet());
                    WriteOutcome out = null;
                    try {
                        for (int attempt = 1; attempt <= MAX_ATTEMPTS && out == null; attempt++) {
                            out = attempt(op, s, attributes, fence, resource).orElse(null);
                        }
                        if (out == null) {
                            throw new FenceGuardException(ErrorCode.UNAVAILABLE, resource, op.description + " gave up after " + MAX_ATTEMPTS
                                    + " attempts: the row kept changing between statements");
                        }
                        return out;
                    } finally {
                        managed.release(out, op == Operation.DELETE);
                    }
                });
            } catch (ManagedRow.Refused e) {
                throw e;
            } catch (RuntimeException e) {
                throw JpaErrors.map(e, resource, op.description);
            }
        });
    }

    /** One round of a write: its statement, then what a miss calls for; empty if the row changed meanwhile. */
    private Optional<WriteOutcome> attempt(Operation op, Statements s, List<String> attributes, FenceToken fence, String resource) {
        String first = switch (op) {
            case UPDATE -> m.update(attributes, true);
            case CLAIM -> m.update(attributes, true); // no values, unless the managed instance had pending changes
            case UPSERT -> m.upsert(attributes);
            case DELETE -> m.markDeleted();
        };
        if (s.execute(first, true) > 0) {
            return Optional.of(new WriteOutcome.Applied(resource, fence.value()));
        }
        EntityMapping.Row row = s.read();
        if (row != null && !m.rule().admits(fence, row.fence())) {
            return Optional.of(m.rule().stale(resource, fence, row.fence()));
        }
        // The rule admits the fence (or there is no row), yet the statement changed nothing.
        return switch (op) {
            case UPDATE -> Optional.of(new WriteOutcome.NotFound(resource)); // no row, or a tombstone
            case UPSERT -> Optional.empty(); // the row changed after the statement
            case CLAIM -> {
                if (!m.hasTombstone()) {
                    yield Optional.of(new WriteOutcome.NotFound(resource));
                }
                if (row != null && !row.deleted()) {
                    yield Optional.empty(); // a live row appeared or changed after the claim
                }
                String record = row == null ? m.insertTombstone(List.of()) : m.raiseTombstone();
                yield s.execute(record, row == null) > 0 ? Optional.of(new WriteOutcome.NotFound(resource)) : Optional.empty();
            }
            case DELETE -> row == null && s.execute(m.insertTombstone(attributes), true) > 0
                    ? Optional.of(new WriteOutcome.Applied(resource, fence.value()))
                    : Optional.empty(); // the row appeared or changed after the first statement
        };
    }

    /** The statements of one write, on one entity manager, with its bound values. */
    private final class Statements {
        private final EntityManager em;
        private final Object id;
        private final Object fence;
        private final List<Object> values;

        Statements(EntityManager em, Object id, Object fence, List<Object> values) {
            this.em = em;
            this.id = id;
            this.fence = fence;
            this.values = values;
        }

        /** Runs an update or insert; binds the values only if {@code withValues}. */
        int execute(String statement, boolean withValues) {
            Query q = em.createQuery(statement).setParameter("id", id).setParameter("fence", fence);
            if (withValues) {
                for (int i = 0; i < values.size() && statement.contains(":v" + i); i++) {
                    q.setParameter("v" + i, values.get(i));
                }
            }
            return q.executeUpdate();
        }

        EntityMapping.Row read() {
            List<?> rows = em.createQuery(m.read()).setParameter("id", id).getResultList();
            return rows.isEmpty() ? null : m.row(rows.getFirst());
        }
    }
}
