package dev.fenceguard.jpa.internal;

import dev.fenceguard.core.WriteOutcome;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityNotFoundException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.hibernate.FlushMode;
import org.hibernate.Session;
import org.hibernate.collection.spi.PersistentCollection;
import org.hibernate.engine.spi.EntityEntry;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.persister.entity.EntityPersister;
import org.hibernate.type.Type;

/**
 * The instance of the row a fenced write is about that the caller's entity manager manages, held out of
 * Hibernate's flushes for the length of the write.
 *
 * <p>Why: a bulk statement makes Hibernate flush (flush mode AUTO) the pending changes of the entity's
 * instances first, with a plain {@code UPDATE} that checks no fence. For the written row that flush is
 * the very write the fence must judge: a zombie's changed instance would be written over the
 * successor's row before its fenced statement is refused (or, with {@code @Version}, fail with an
 * optimistic-lock error instead of {@code Stale}). So the instance is made read-only (Hibernate neither
 * dirty-checks nor flushes it) before the first statement; its pending changes to basic attributes are
 * handed to the fenced statement instead, so they are written under the fence or not at all. After the
 * write, the instance is refreshed from the row whatever the outcome (a refused write's changes must not
 * be flushed at commit either), or detached after an applied delete, and its read-only state restored.
 */
public final class ManagedRow {

    private static final ManagedRow NONE = new ManagedRow(null, null, Map.of(), false);

    private final EntityManager em;
    private final Object instance;
    private final Map<String, Object> pending;
    private final boolean wasReadOnly;

    private ManagedRow(EntityManager em, Object instance, Map<String, Object> pending, boolean wasReadOnly) {
        this.em = em;
        this.instance = instance;
        this.pending = pending;
        this.wasReadOnly = wasReadOnly;
    }

    /** Nothing managed: writes on an entity manager of their own. */
    public static ManagedRow none() {
        return NONE;
    }

    /**
     * Takes {@code em}'s managed instance of the row of {@code id}, if it has one that exists in the
     * database, out of flushes. Looked up by key: no statement is run.
     *
     * <p>Pending changes of the attributes a fenced statement can carry (the basic ones fence-guard does
     * not set itself) are returned by {@link #pending()}; those of the id, fence, tombstone and version are
     * dropped, as fence-guard sets those itself.
     *
     * <p>Under flush mode AUTO, the other pending changes of the persistence context are flushed here,
     * before the fenced statement (see the comment in the code).
     *
     * @throws IllegalStateException if the instance has pending changes a fenced statement cannot carry
     *     (an association, an embeddable, a collection), before any statement
     */
    public static ManagedRow take(EntityManager em, EntityMapping<?> m, Object id) {
        SharedSessionContractImplementor session = em.unwrap(SharedSessionContractImplementor.class);
        EntityPersister persister = session.getFactory().getMappingMetamodel().getEntityDescriptor(m.type());
        Object managed = session.getPersistenceContextInternal().getEntity(session.generateEntityKey(id, persister));
        if (managed == null) {
            return NONE;
        }
        EntityEntry entry = session.getPersistenceContextInternal().getEntry(managed);
        if (entry == null || !entry.isExistsInDatabase()) {
            // Persisted in this transaction and not inserted yet: Hibernate's flush inserts it, and an
            // insert never overwrites a row (a row of that id makes it fail as a duplicate).
            return NONE;
        }
        Session s = em.unwrap(Session.class);
        if (entry.isReadOnly()) {
            flushTheRest(s, managed, true);
            return new ManagedRow(em, managed, Map.of(), true); // never flushed; only kept in step
        }
        // The instance may be of a subclass, whose own attributes the entity's persister does not know.
        persister = entry.getPersister();
        Map<String, Object> pending = new LinkedHashMap<>();
        Object[] current = persister.getValues(managed);
        int[] dirty = persister.findDirty(current, entry.getLoadedState(), managed, session);
        if (dirty != null) {
            String[] names = persister.getPropertyNames();
            for (int i : dirty) {
                String name = names[i];
                if (m.carries(name)) {
                    pending.put(name, current[i]);
                } else if (!m.setsItself(name)) {
                    throw refused(persister, name);
                }
            }
        }
        Type[] types = persister.getPropertyTypes();
        for (int i = 0; i < types.length; i++) {
            // A changed collection of a read-only owner fails Hibernate's flush ("Immutable collection was
            // modified"), and with a @Version its flush raises the owner's version by a plain UPDATE of the row.
            if (types[i].isCollectionType() && current[i] instanceof PersistentCollection<?> c && c.isDirty()) {
                throw refused(persister, persister.getPropertyNames()[i]);
            }
        }
        s.setReadOnly(managed, true);
        flushTheRest(s, managed, false);
        return new ManagedRow(em, managed, Collections.unmodifiableMap(pending), false); // values may be null
    }

    private static void flushTheRest(Session s, Object managed, boolean wasReadOnly) {
        if (s.getHibernateFlushMode() == FlushMode.AUTO) {
            // Everything else pending is flushed now, as AUTO allows at any query: the refresh after the
            // write cascades to associations mapped with CascadeType.REFRESH (or ALL) and would otherwise
            // reset a child's unflushed change, which Hibernate's own auto-flush (limited to the
            // statement's table) leaves pending.
            try {
                s.flush();
            } catch (RuntimeException e) {
                s.setReadOnly(managed, wasReadOnly);
                throw e;
            }
        }
    }

    private static Refused refused(EntityPersister persister, String attribute) {
        return new Refused("the " + persister.getEntityName() + " of this fenced write has unflushed changes to '" + attribute
                + "', which a fenced statement cannot carry (it carries the entity's own basic attributes only); write them before the "
                + "fenced write, or after it");
    }

    /** Pending changes no fenced statement can carry: a usage error, reported as it is rather than mapped as a database error. */
    public static final class Refused extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }

    /** The instance's pending changes to attributes a fenced statement can carry, by attribute name. */
    public Map<String, Object> pending() {
        return pending;
    }

    /**
     * Puts the instance back in step with the row: refreshed (the fenced values, or, after a refusal, the
     * row as it is), or detached after an applied delete or when the row is gone. On a failed write
     * ({@code outcome} null) it is detached: its pending changes were not written, and Hibernate's flush must
     * not write them unfenced if the caller commits anyway (restoring its read-only state would take the
     * pending values as its new snapshot; with bytecode-enhanced dirty tracking they would even be flushed).
     */
    public void release(WriteOutcome outcome, boolean deleted) {
        if (instance == null) {
            return;
        }
        Session s = em.unwrap(Session.class);
        if (outcome == null) {
            em.detach(instance);
            return;
        }
        if (deleted && outcome.isApplied()) {
            em.detach(instance);
            return;
        }
        try {
            em.refresh(instance);
        } catch (EntityNotFoundException gone) {
            em.detach(instance);
            return;
        }
        s.setReadOnly(instance, wasReadOnly); // taken from the refreshed state: nothing pending
    }
}
