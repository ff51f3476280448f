package dev.fenceguard.jpa.internal;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.jooq.FencedWriter;
import dev.fenceguard.jpa.Fence;
import dev.fenceguard.jpa.Tombstone;
import dev.fenceguard.jpa.spring.FencedJdbcRepository;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jooq.DataType;
import org.jooq.Name;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.springframework.data.mapping.PersistentPropertyAccessor;
import org.springframework.data.relational.core.mapping.RelationalMappingContext;
import org.springframework.data.relational.core.mapping.RelationalPersistentEntity;
import org.springframework.data.relational.core.mapping.RelationalPersistentProperty;
import org.springframework.data.relational.core.sql.SqlIdentifier;
import org.springframework.data.repository.core.RepositoryMethodContext;
import org.springframework.data.repository.core.support.RepositoryMetadataAccess;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The implementation of {@link FencedJdbcRepository}, registered for every repository that extends it
 * through {@code META-INF/spring.factories}: a {@link FencedTable} per aggregate type, built from its
 * relational mapping (table, id column, the columns of its {@link Fence} and {@link Tombstone}
 * properties), written on the connection of the current Spring transaction if there is one.
 */
public final class FencedJdbcRepositoryImpl implements FencedJdbcRepository<Object, Object>, RepositoryMetadataAccess {

    private final RelationalMappingContext mapping;
    private final DataSource dataSource;
    private final ConcurrentMap<Class<?>, Aggregate> aggregates = new ConcurrentHashMap<>();

    /** One aggregate type's table and mapping, with its fence and (or null) tombstone properties. */
    private record Aggregate(FencedTable table, RelationalPersistentEntity<?> entity, RelationalPersistentProperty fence,
            RelationalPersistentProperty tombstone) {}

    public FencedJdbcRepositoryImpl(RelationalMappingContext mapping, DataSource dataSource) {
        this.mapping = mapping;
        this.dataSource = dataSource;
    }

    @Override
    public WriteOutcome fencedUpdate(Object id, FenceToken fence, Map<String, ?> values) {
        Aggregate a = aggregate();
        Assignments set = columns(a, values);
        return run(a, w -> w.update(id, fence, set));
    }

    @Override
    public WriteOutcome fencedUpsert(Object id, FenceToken fence, Map<String, ?> values) {
        Aggregate a = aggregate();
        Assignments set = columns(a, values);
        return run(a, w -> w.upsert(id, fence, set));
    }

    @Override
    public WriteOutcome fencedSave(Object aggregate, FenceToken fence) {
        Aggregate a = aggregate();
        Objects.requireNonNull(aggregate, "entity");
        RelationalPersistentEntity<?> entity = a.entity();
        if (!entity.getType().isInstance(aggregate)) {
            throw new IllegalArgumentException("a " + aggregate.getClass().getName() + " is not a " + entity.getType().getSimpleName());
        }
        Object id = entity.getIdentifierAccessor(aggregate).getIdentifier();
        if (id == null) {
            throw new IllegalArgumentException("the " + entity.getType().getSimpleName() + " to save has no id; a fenced save needs an "
                    + "assigned id");
        }
        PersistentPropertyAccessor<?> values = entity.getPropertyAccessor(aggregate);
        Map<String, Object> byColumn = new LinkedHashMap<>();
        for (RelationalPersistentProperty p : entity) {
            if (p.isIdProperty() || p.equals(a.fence()) || p.equals(a.tombstone())) {
                continue;
            }
            if (p.isEmbedded()) {
                throw new IllegalArgumentException("a fenced save writes simple properties only, and " + entity.getType().getSimpleName()
                        + "." + p.getName() + " is embedded; use fencedUpsert with the values");
            }
            if (p.isEntity() || p.isCollectionLike() || p.isMap()) {
                continue; // held in child tables, which a fenced write of this row does not touch
            }
            byColumn.put(p.getColumnName().getReference(), values.getProperty(p));
        }
        Assignments set = Assignments.of(byColumn);
        return run(a, w -> w.upsert(id, fence, set));
    }

    @Override
    public WriteOutcome fencedClaim(Object id, FenceToken fence) {
        return run(aggregate(), w -> w.claim(id, fence));
    }

    @Override
    public WriteOutcome fencedDelete(Object id, FenceToken fence) {
        return run(aggregate(), w -> w.delete(id, fence));
    }

    private WriteOutcome run(Aggregate a, Function<FencedWriter, WriteOutcome> write) {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            return write.apply(a.table().on(dataSource));
        }
        // The transaction's own connection: the write commits or rolls back with the caller's work.
        Connection c;
        try {
            c = DataSourceUtils.getConnection(dataSource);
        } catch (RuntimeException e) {
            throw JpaErrors.map(e, a.table().name(), "fenced write");
        }
        try {
            return write.apply(a.table().on(c));
        } finally {
            DataSourceUtils.releaseConnection(c, dataSource);
        }
    }

    private Aggregate aggregate() {
        return aggregates.computeIfAbsent(RepositoryMethodContext.getContext().getMetadata().getDomainType(), this::resolve);
    }

    private Aggregate resolve(Class<?> type) {
        RelationalPersistentEntity<?> entity = mapping.getRequiredPersistentEntity(type);
        if (entity.getVersionProperty() != null) {
            throw new IllegalArgumentException(type.getName() + " has a @Version property, which fenced writes through Spring Data JDBC "
                    + "cannot raise; an aggregate loaded before a fenced write could then be saved over it. Remove @Version, or write "
                    + "through JPA (FencedJpaRepository), which raises it");
        }
        RelationalPersistentProperty fence = entity.getPersistentProperty(Fence.class);
        if (fence == null) {
            throw new IllegalArgumentException(type.getName() + " has no @Fence property");
        }
        RelationalPersistentProperty tombstone = entity.getPersistentProperty(Tombstone.class);
        List<String> table = new ArrayList<>();
        entity.getQualifiedTableName().forEach(part -> table.add(part.getReference()));
        boolean text = fence.getType() == String.class;
        DataType<?> fenceType = text ? SQLDataType.CHAR(15) : SQLDataType.BIGINT;
        FencedTable.Builder b = FencedTable.builder(DSL.table(DSL.name(table)),
                DSL.field(column(table, entity.getRequiredIdProperty().getColumnName()), entity.getRequiredIdProperty().getActualType()),
                DSL.field(column(table, fence.getColumnName()), fenceType))
                .withPolicy(fence.getRequiredAnnotation(Fence.class).policy())
                .withEncoding(text ? dev.fenceguard.core.FenceEncoding.TEXT : dev.fenceguard.core.FenceEncoding.INTEGER);
        if (tombstone != null) {
            b.withTombstoneColumn(DSL.field(column(table, tombstone.getColumnName()), SQLDataType.BOOLEAN));
        }
        return new Aggregate(b.build(), entity, fence, tombstone);
    }

    private static Name column(List<String> table, SqlIdentifier column) {
        List<String> parts = new ArrayList<>(table);
        parts.add(column.getReference());
        return DSL.name(parts);
    }

    /**
     * {@code values}, by property name, as column assignments.
     *
     * @throws IllegalArgumentException if a name is not a property of the aggregate
     */
    private static Assignments columns(Aggregate a, Map<String, ?> values) {
        Objects.requireNonNull(values, "values");
        Map<String, Object> byColumn = new LinkedHashMap<>();
        values.forEach((property, value) -> {
            RelationalPersistentProperty p = a.entity().getPersistentProperty(Objects.requireNonNull(property, "property name"));
            if (p == null) {
                throw new IllegalArgumentException("'" + property + "' is not a property of " + a.entity().getType().getSimpleName());
            }
            byColumn.put(p.getColumnName().getReference(), value);
        });
        return Assignments.of(byColumn);
    }

}
