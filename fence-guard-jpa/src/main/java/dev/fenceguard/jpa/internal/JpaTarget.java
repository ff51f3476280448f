package dev.fenceguard.jpa.internal;

import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.EntityTransaction;
import java.util.function.Function;

/**
 * Where a fenced write runs: in the transaction a caller's {@link EntityManager} has joined, or on an
 * entity manager of its own in a transaction of its own. Errors come out as the provider threw them;
 * the writer maps them.
 */
public abstract class JpaTarget {

    private JpaTarget() {}

    /** Runs on {@code em}, which must have joined a transaction; never commits or rolls back. */
    public static JpaTarget of(EntityManager em) {
        return new JpaTarget() {
            @Override
            public <R> R run(Function<EntityManager, R> work) {
                return work.apply(em);
            }

            @Override
            public void requireTransaction(String operation) {
                if (!em.isJoinedToTransaction()) {
                    throw new IllegalStateException(operation + " needs a transaction: the EntityManager has joined none (begin one, or "
                            + "call from a @Transactional method)");
                }
            }

            @Override
            public boolean shared() {
                return true;
            }
        };
    }

    /** Runs on a new entity manager of {@code factory}, in a transaction committed before it returns. */
    public static JpaTarget of(EntityManagerFactory factory) {
        return new JpaTarget() {
            @Override
            public <R> R run(Function<EntityManager, R> work) {
                try (EntityManager em = factory.createEntityManager()) {
                    EntityTransaction tx = em.getTransaction();
                    tx.begin();
                    try {
                        R out = work.apply(em);
                        tx.commit();
                        return out;
                    } catch (RuntimeException | Error e) {
                        if (tx.isActive()) {
                            try {
                                tx.rollback();
                            } catch (RuntimeException rollback) {
                                e.addSuppressed(rollback); // the write's own error is the one to report
                            }
                        }
                        throw e;
                    }
                }
            }

            @Override
            public void requireTransaction(String operation) {
                // each write opens its own
            }

            @Override
            public boolean shared() {
                return false;
            }
        };
    }

    /** Runs {@code work}. */
    public abstract <R> R run(Function<EntityManager, R> work);

    /**
     * @throws IllegalStateException if writes here need a transaction and there is none
     */
    public abstract void requireTransaction(String operation);

    /** Whether the entity manager is the caller's, so that instances it manages must be kept in step. */
    public abstract boolean shared();
}
