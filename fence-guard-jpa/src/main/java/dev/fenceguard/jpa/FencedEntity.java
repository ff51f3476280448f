package dev.fenceguard.jpa;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.jpa.internal.EntityMapping;
import dev.fenceguard.jpa.internal.JpaTarget;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * A JPA entity whose rows are guarded by a fence attribute: the definition of how to write to it so
 * that stale writes are refused. Immutable and thread-safe; build once and share.
 *
 * <pre>{@code
 * FencedEntity<Order> orders = FencedEntity.of(Order.class);          // @Fence, @Tombstone on the entity
 * // or by attribute name, for entities you cannot annotate
 * FencedEntity<Order> byName = FencedEntity.builder(Order.class)
 *         .withFenceAttribute("fenceToken").withTombstoneAttribute("deleted").build();
 *
 * orders.on(entityManager).update(42L, lease.fence(), Map.of("status", "paid")).orThrow();
 * }</pre>
 *
 * <p>Each write is one bulk JPQL/HQL statement that carries the write rule of {@link FencePolicy}
 * ({@code coalesce(e.fence, 0) <= :fence}, or {@code <}) in its {@code where} clause, so the data and
 * the stored fence change together or not at all, in the database. Only when that statement changes
 * nothing does a second one read the row to tell {@code Stale} from {@code NotFound}.
 *
 * <p>Requirements: Hibernate ORM 7 as the JPA provider (upserts and tombstone rows are HQL
 * {@code insert .. on conflict}); a single-attribute id whose column is the primary key or unique;
 * the fence attribute a {@code Long}/{@code long} ({@code BIGINT}) or {@code String} ({@code CHAR(15)},
 * the 15-digit text form), mapped {@code @Column(updatable = false)} so that Hibernate's own flush never
 * writes it (see {@link Fence}); the tombstone attribute, if any, a {@code Boolean}/{@code boolean},
 * mapped {@code updatable = false} too. An
 * entity with a numeric {@code @Version} gets its version raised by every fenced write, so an instance
 * loaded before the write fails its own optimistic check instead of overwriting the fenced row; both
 * checks hold, neither replaces the other (see {@code docs/jpa.md}).
 *
 * <p>Deletes need a tombstone attribute ({@link Tombstone}, {@link Builder#withTombstoneAttribute}): a
 * fenced delete sets it and keeps the row with its fence, so a zombie's upsert cannot bring the row
 * back; a delete or claim of an id that has no row inserts a tombstoned row for the same reason. This
 * is the storage of {@code fence-guard-jdbc}'s {@code FencedTable}: a boolean column beside the fence.
 *
 * @param <T> the entity type
 * @since 0.1
 */
public final class FencedEntity<T> {

    private final Class<T> type;
    private final String fence;
    private final String tombstone;
    private final FencePolicy policy;
    private final LockMetrics metrics;
    private final LockObservations observations;

    private FencedEntity(Builder<T> b) {
        this.type = b.type;
        this.fence = b.fence;
        this.tombstone = b.tombstone;
        this.policy = b.policy;
        this.metrics = b.metrics;
        this.observations = b.observations;
    }

    /**
     * The definition that the {@link Fence} and {@link Tombstone} annotations of {@code type} describe,
     * with the policy of its {@code @Fence}.
     *
     * @throws IllegalArgumentException if {@code type} has no {@code @Fence} attribute, or more than one
     *     attribute carries either annotation
     */
    public static <T> FencedEntity<T> of(Class<T> type) {
        return builder(type).build();
    }

    /**
     * A builder that starts from the annotations of {@code type}, if it has any.
     *
     * @throws IllegalArgumentException if more than one attribute carries {@code @Fence} or {@code @Tombstone}
     */
    public static <T> Builder<T> builder(Class<T> type) {
        return new Builder<>(Objects.requireNonNull(type, "type"));
    }

    /** The entity class. */
    public Class<T> type() {
        return type;
    }

    /** The name of the fence attribute. */
    public String fenceAttribute() {
        return fence;
    }

    /** The name of the tombstone attribute, if the entity has one. */
    public Optional<String> tombstoneAttribute() {
        return Optional.ofNullable(tombstone);
    }

    /** The rule writes are judged by. */
    public FencePolicy policy() {
        return policy;
    }

    /**
     * Writes through {@code entityManager}, in the transaction it has joined (a Spring
     * {@code @Transactional} method, or {@code getTransaction().begin()}); never commits or rolls back.
     * The instance of the written row that {@code entityManager} manages, if any, is kept out of
     * Hibernate's flushes during the write (its pending changes are written by the fenced statement, or
     * not at all), and refreshed after it whatever the outcome (detached after an applied delete), so
     * that it is never flushed over the fenced row.
     *
     * @throws IllegalArgumentException if the entity manager's metamodel does not map the entity as this
     *     definition requires (see the class comment)
     */
    public FencedEntityWriter<T> on(EntityManager entityManager) {
        Objects.requireNonNull(entityManager, "entityManager");
        return new FencedEntityWriter<>(mapping(entityManager.getEntityManagerFactory()), JpaTarget.of(entityManager));
    }

    /**
     * Writes on entity managers of their own from {@code factory}, one per write, each in a transaction
     * of its own that is committed before the write returns.
     *
     * @throws IllegalArgumentException if the factory's metamodel does not map the entity as this
     *     definition requires (see the class comment)
     */
    public FencedEntityWriter<T> on(EntityManagerFactory factory) {
        Objects.requireNonNull(factory, "factory");
        return new FencedEntityWriter<>(mapping(factory), JpaTarget.of(factory));
    }

    private EntityMapping<T> mapping(EntityManagerFactory factory) {
        return EntityMapping.resolve(factory, type, fence, tombstone, policy, metrics != null ? metrics : LockMetrics.automatic(),
                observations);
    }

    @Override
    public String toString() {
        return "FencedEntity[" + type.getName() + ", fence=" + fence + (tombstone != null ? ", tombstone=" + tombstone : "")
                + ", " + policy + "]";
    }

    /** Options for a {@link FencedEntity}. Not thread-safe; {@link #build()} copies. */
    public static final class Builder<T> {
        private final Class<T> type;
        private String fence;
        private String tombstone;
        private FencePolicy policy = FencePolicy.SAME_OR_NEWER;
        private LockMetrics metrics;
        private LockObservations observations = LockObservations.none();

        private Builder(Class<T> type) {
            this.type = type;
            Optional<Annotated<Fence>> f = annotated(type, Fence.class);
            f.ifPresent(a -> {
                this.fence = a.attribute();
                this.policy = a.annotation().policy();
            });
            annotated(type, Tombstone.class).ifPresent(a -> this.tombstone = a.attribute());
        }

        /**
         * The attribute that holds the fence, instead of the one marked {@link Fence}.
         *
         * @throws IllegalArgumentException if {@code attribute} is not a Java identifier
         */
        public Builder<T> withFenceAttribute(String attribute) {
            this.fence = requireName("fence attribute", attribute);
            return this;
        }

        /**
         * The boolean attribute that marks fenced deletes, instead of the one marked {@link Tombstone};
         * required for {@link FencedEntityWriter#delete}.
         *
         * @throws IllegalArgumentException if {@code attribute} is not a Java identifier
         */
        public Builder<T> withTombstoneAttribute(String attribute) {
            this.tombstone = requireName("tombstone attribute", attribute);
            return this;
        }

        /** The write rule, instead of the policy of the {@code @Fence} annotation; default {@link FencePolicy#SAME_OR_NEWER}. */
        public Builder<T> withPolicy(FencePolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** Where rejected writes are counted; default {@link LockMetrics#automatic()}. */
        public Builder<T> withMetrics(LockMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /** Where each fenced write is observed; default {@link LockObservations#none()}. */
        public Builder<T> withObservations(LockObservations observations) {
            this.observations = Objects.requireNonNull(observations, "observations");
            return this;
        }

        /**
         * The definition.
         *
         * @throws IllegalArgumentException if no fence attribute was named or annotated, or the fence and
         *     tombstone attributes are the same
         */
        public FencedEntity<T> build() {
            if (fence == null) {
                throw new IllegalArgumentException(type.getName() + " has no fence attribute: mark one with @Fence or name it with "
                        + "withFenceAttribute(..)");
            }
            if (fence.equals(tombstone)) {
                throw new IllegalArgumentException("the fence and tombstone attributes must differ, both were '" + fence + "'");
            }
            Builder<T> copy = new Builder<>(type);
            copy.fence = fence;
            copy.tombstone = tombstone;
            copy.policy = policy;
            copy.metrics = metrics;
            copy.observations = observations;
            return new FencedEntity<>(copy);
        }
    }

    private static String requireName(String what, String name) {
        Objects.requireNonNull(name, what);
        if (name.isEmpty() || !Character.isJavaIdentifierStart(name.charAt(0))
                || !name.chars().skip(1).allMatch(Character::isJavaIdentifierPart)) {
            throw new IllegalArgumentException(what + " must be a Java identifier (an entity attribute name), was '" + name + "'");
        }
        return name;
    }

    private record Annotated<A>(String attribute, A annotation) {}

    /** The one attribute of {@code type} or its superclasses annotated with {@code annotation}. */
    private static <A extends java.lang.annotation.Annotation> Optional<Annotated<A>> annotated(Class<?> type, Class<A> annotation) {
        List<Annotated<A>> found = new ArrayList<>();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                add(found, f, f.getName(), annotation);
            }
            for (Method m : c.getDeclaredMethods()) {
                add(found, m, property(m.getName()), annotation);
            }
        }
        if (found.size() > 1) {
            throw new IllegalArgumentException(type.getName() + " has more than one @" + annotation.getSimpleName() + " attribute: "
                    + found.stream().map(Annotated::attribute).toList());
        }
        return found.stream().findFirst();
    }

    private static <A extends java.lang.annotation.Annotation> void add(List<Annotated<A>> found, AnnotatedElement element, String name,
            Class<A> annotation) {
        A a = element.getAnnotation(annotation);
        if (a != null) {
            found.add(new Annotated<>(name, a));
        }
    }

    /** The property a getter stands for: {@code getFenceToken} and {@code isDeleted} to {@code fenceToken}, {@code deleted}. */
    private static String property(String method) {
        String bare = method.startsWith("get") && method.length() > 3 ? method.substring(3)
                : method.startsWith("is") && method.length() > 2 ? method.substring(2) : method;
        return bare.substring(0, 1).toLowerCase(Locale.ROOT) + bare.substring(1);
    }
}
