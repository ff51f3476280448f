package dev.fenceguard.jpa.internal;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jpa.FencedEntity;
import dev.fenceguard.jpa.FencedEntityWriter;
import dev.fenceguard.jpa.spring.FencedJpaRepository;
import jakarta.persistence.EntityManager;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.data.repository.core.RepositoryMethodContext;
import org.springframework.data.repository.core.support.RepositoryMetadataAccess;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The implementation of {@link FencedJpaRepository}, registered for every repository that extends it
 * through {@code META-INF/spring.factories}. One instance serves all such repositories of an
 * application context: the entity of each call comes from the repository's metadata
 * ({@link RepositoryMetadataAccess} makes Spring Data expose it), and a writer per entity is kept.
 */
public final class FencedJpaRepositoryImpl implements FencedJpaRepository<Object, Object>, RepositoryMetadataAccess {

    private final EntityManager em;
    private final TransactionTemplate transactions;
    private final ConcurrentMap<Class<?>, FencedEntityWriter<?>> writers = new ConcurrentHashMap<>();

    /**
     * @param em the application's shared entity manager (Spring Data JPA registers one per factory)
     * @param transactions the application's transaction manager, used to start a transaction when a
     *     write is called outside one; without a unique one such calls fail with an
     *     {@link IllegalStateException}
     */
    public FencedJpaRepositoryImpl(EntityManager em, ObjectProvider<PlatformTransactionManager> transactions) {
        this.em = em;
        PlatformTransactionManager manager = transactions.getIfUnique();
        this.transactions = manager == null ? null : new TransactionTemplate(manager);
    }

    @Override
    public WriteOutcome fencedUpdate(Object id, FenceToken fence, Map<String, ?> values) {
        return run(w -> w.update(id, fence, values));
    }

    @Override
    public WriteOutcome fencedUpsert(Object id, FenceToken fence, Map<String, ?> values) {
        return run(w -> w.upsert(id, fence, values));
    }

    @Override
    @SuppressWarnings("unchecked")
    public WriteOutcome fencedSave(Object entity, FenceToken fence) {
        return run(w -> ((FencedEntityWriter<Object>) w).save(entity, fence));
    }

    @Override
    public WriteOutcome fencedClaim(Object id, FenceToken fence) {
        return run(w -> w.claim(id, fence));
    }

    @Override
    public WriteOutcome fencedDelete(Object id, FenceToken fence) {
        return run(w -> w.delete(id, fence));
    }

    private WriteOutcome run(Function<FencedEntityWriter<?>, WriteOutcome> write) {
        FencedEntityWriter<?> writer = writers.computeIfAbsent(RepositoryMethodContext.getContext().getMetadata().getDomainType(),
                type -> FencedEntity.of(type).on(em));
        if (transactions == null || TransactionSynchronizationManager.isActualTransactionActive()) {
            // The caller's transaction: joined as it is, so that an argument refused before any statement
            // does not mark it rollback-only, as a participating TransactionTemplate would.
            return write.apply(writer);
        }
        return transactions.execute(status -> write.apply(writer));
    }
}
