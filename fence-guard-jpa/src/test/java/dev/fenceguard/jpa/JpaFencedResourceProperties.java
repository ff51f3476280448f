package dev.fenceguard.jpa;

import dev.fenceguard.core.LockMetrics;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.lifecycle.AfterContainer;

/** The fenced-resource template on FencedEntityWriter update, upsert and tombstone delete, through Hibernate on real PostgreSQL. */
class JpaFencedResourceProperties extends RepositoryWritesProperties {

    private static final JpaTestSupport DB = new JpaTestSupport("jpaprops", List.of(Shipment.DDL), Shipment.class);
    private static final FencedEntityWriter<Shipment> SHIPMENTS = FencedEntity.builder(Shipment.class).withMetrics(LockMetrics.none())
            .build().on(DB.emf);

    @AfterContainer
    static void close() {
        DB.close();
    }

    @Override
    protected void create(String id) {
        DB.inTransaction(em -> {
            em.persist(new Shipment(id, initialValue()));
            return null;
        });
    }

    @Override
    protected Writes writes() {
        return new Writes((id, fence, value) -> SHIPMENTS.update(id, fence, Map.of("status", value)),
                (id, fence, value) -> SHIPMENTS.upsert(id, fence, Map.of("status", value)), SHIPMENTS::delete);
    }

    @Override
    protected Optional<String> read(String id) {
        return DB.inTransaction(em -> em.createQuery("select s.status from Shipment s where s.id = :id and (s.deleted is null or s.deleted = false)",
                String.class).setParameter("id", id).getResultStream().findFirst());
    }
}
