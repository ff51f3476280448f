package dev.fenceguard.jpa.internal;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.spi.WriteRule;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceUnitUtil;
import jakarta.persistence.metamodel.Attribute;
import jakarta.persistence.metamodel.EntityType;
import jakarta.persistence.metamodel.Metamodel;
import jakarta.persistence.metamodel.SingularAttribute;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.hibernate.Hibernate;
import org.hibernate.LazyInitializationException;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.persister.entity.EntityPersister;

/**
 * One fenced entity as its metamodel maps it: the attributes fence-guard reads and sets, the write
 * rule, the checks of a write's arguments (all before any I/O) and the text of each statement. The
 * statements are HQL strings built from attribute names the metamodel confirmed, so no caller text
 * reaches them; every value is a parameter. Hibernate caches the plan of each string.
 *
 * <p>Parameters: {@code :id}, {@code :fence} (encoded), {@code :v0}, {@code :v1}, ... for the values, in
 * the order of the attribute list a statement was built for.
 */
public final class EntityMapping<T> {

    private static final String ALIAS = "e";
    private static final Set<Class<?>> NUMERIC_VERSIONS = Set.of(Long.class, long.class, Integer.class, int.class, Short.class,
            short.class);

    private final EntityType<T> entity;
    private final String name;
    private final String id;
    private final Class<?> idType;
    private final String fence;
    private final String tombstone;
    private final String version;
    private final WriteRule rule;
    private final EntityPersister persister;
    private final PersistenceUnitUtil util;
    /** The attributes {@link #valuesOf} reads: the basic ones fence-guard does not set itself. */
    private final List<String> saved = new ArrayList<>();
    /** A singular attribute that is not basic (an association, an embeddable), which a save cannot write; or null. */
    private final String unsaveable;

    private EntityMapping(EntityType<T> entity, String id, String fence, String tombstone, String version, WriteRule rule,
            EntityManagerFactory factory) {
        this.entity = entity;
        this.persister = factory.unwrap(SessionFactoryImplementor.class).getMappingMetamodel().getEntityDescriptor(entity.getJavaType());
        this.util = factory.getPersistenceUnitUtil();
        String other = null;
        for (SingularAttribute<? super T, ?> a : entity.getSingularAttributes()) {
            if (a.getName().equals(id) || a.getName().equals(fence) || a.getName().equals(tombstone) || a.getName().equals(version)) {
                continue;
            }
            if (a.getPersistentAttributeType() == Attribute.PersistentAttributeType.BASIC) {
                saved.add(a.getName());
            } else if (other == null) {
                other = a.getName();
            }
        }
        saved.sort(null); // a stable statement text, so Hibernate's plan cache keeps one plan per entity
        this.unsaveable = other;
        this.name = entity.getName();
        this.id = id;
        this.idType = boxed(entity.getIdType().getJavaType());
        this.fence = fence;
        this.tombstone = tombstone;
        this.version = version;
        this.rule = rule;
    }

    /**
     * The mapping of {@code type} in {@code factory}'s metamodel.
     *
     * @throws IllegalArgumentException if {@code type} is not an entity there, or its id, fence, tombstone
     *     or version attribute is not as fence-guard needs it
     */
    public static <T> EntityMapping<T> resolve(EntityManagerFactory factory, Class<T> type, String fence, String tombstone,
            FencePolicy policy, LockMetrics metrics, LockObservations observations) {
        Metamodel metamodel = factory.getMetamodel();
        EntityType<T> entity;
        try {
            entity = metamodel.entity(type);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(type.getName() + " is not an entity of this persistence unit", e);
        }
        if (!entity.hasSingleIdAttribute()) {
            throw new IllegalArgumentException(entity.getName() + " has a composite id (@IdClass); fenced writes need a single id attribute");
        }
        String id = entity.getId(entity.getIdType().getJavaType()).getName();
        Class<?> fenceType = singular(entity, fence, "fence").getJavaType();
        FenceEncoding encoding;
        if (fenceType == Long.class || fenceType == long.class) {
            encoding = FenceEncoding.INTEGER;
        } else if (fenceType == String.class) {
            encoding = FenceEncoding.TEXT;
        } else {
            throw new IllegalArgumentException("fence attribute " + entity.getName() + "." + fence + " must be a Long, long or String (the "
                    + "15-digit text form), was " + fenceType.getName());
        }
        if (tombstone != null) {
            Class<?> t = singular(entity, tombstone, "tombstone").getJavaType();
            if (t != Boolean.class && t != boolean.class) {
                throw new IllegalArgumentException("tombstone attribute " + entity.getName() + "." + tombstone + " must be a Boolean or boolean, was "
                        + t.getName());
            }
        }
        String version = null;
        if (entity.hasVersionAttribute()) {
            SingularAttribute<? super T, ?> v = entity.getSingularAttributes().stream().filter(SingularAttribute::isVersion).findFirst()
                    .orElseThrow();
            if (!NUMERIC_VERSIONS.contains(v.getJavaType())) {
                throw new IllegalArgumentException("@Version attribute " + entity.getName() + "." + v.getName() + " is a " + v.getJavaType().getName()
                        + "; fenced writes raise the version and support numeric versions only (Long, Integer, Short)");
            }
            version = v.getName();
        }
        for (String special : new String[] {fence, tombstone}) {
            if (special != null && (special.equals(id) || special.equals(version))) {
                throw new IllegalArgumentException("attribute " + entity.getName() + "." + special + " cannot be the fence or tombstone: it is the "
                        + (special.equals(id) ? "id" : "@Version"));
            }
        }
        requireNotFlushed(factory, entity, fence, "fence");
        if (tombstone != null) {
            requireNotFlushed(factory, entity, tombstone, "tombstone");
        }
        WriteRule rule = new WriteRule(policy, encoding, metrics, "jpa", observations);
        return new EntityMapping<>(entity, id, fence, tombstone, version, rule, factory);
    }

    /**
     * Refuses a fence or tombstone column that Hibernate's own flush writes. Without {@code @Version},
     * Hibernate's update of a changed instance writes every updatable column: an instance loaded before a
     * fenced write would put its old fence back over the newer one (every older fence would be admitted
     * again), or its old tombstone flag over a fenced delete (the row would come back). Not updatable, the
     * columns are written by fence-guard's statements only.
     */
    private static void requireNotFlushed(EntityManagerFactory factory, EntityType<?> entity, String attribute, String what) {
        EntityPersister persister = factory.unwrap(SessionFactoryImplementor.class).getMappingMetamodel()
                .getEntityDescriptor(entity.getJavaType());
        String[] names = persister.getPropertyNames();
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(attribute) && persister.getPropertyUpdateability()[i]) {
                throw new IllegalArgumentException(what + " attribute " + entity.getName() + "." + attribute + " is written by Hibernate's "
                        + "flush of every changed " + entity.getName() + ", which would put an instance's old " + what + " back over a "
                        + "fenced write: map it @Column(updatable = false) (updatable=\"false\" in orm.xml); fence-guard's own statements "
                        + "still write it");
            }
        }
    }

    private static SingularAttribute<?, ?> singular(EntityType<?> entity, String attribute, String what) {
        Attribute<?, ?> a;
        try {
            a = entity.getAttribute(attribute);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + " attribute '" + attribute + "' is not an attribute of " + entity.getName(), e);
        }
        if (!(a instanceof SingularAttribute<?, ?> s) || a.getPersistentAttributeType() != Attribute.PersistentAttributeType.BASIC) {
            throw new IllegalArgumentException(what + " attribute " + entity.getName() + "." + attribute + " must be a basic attribute (one column)");
        }
        return s;
    }

    // --- the definition ---

    public String name() {
        return name;
    }

    public Class<T> type() {
        return entity.getJavaType();
    }

    public WriteRule rule() {
        return rule;
    }

    public boolean hasTombstone() {
        return tombstone != null;
    }

    /** How outcomes and errors name the row of {@code id}. */
    public String resource(Object id) {
        String k = String.valueOf(id);
        return name + "[" + this.id + "=" + (k.length() > 64 ? k.substring(0, 64) + "..." : k) + "]";
    }

    /** Whether a fenced statement can carry a value of {@code attribute}: a basic attribute fence-guard does not set itself. */
    boolean carries(String attribute) {
        return saved.contains(attribute);
    }

    /** Whether {@code attribute} is one fence-guard sets itself: the id, fence, tombstone or version. */
    boolean setsItself(String attribute) {
        return attribute.equals(id) || attribute.equals(fence) || attribute.equals(tombstone) || attribute.equals(version);
    }

    // --- arguments, checked before any I/O ---

    /**
     * @throws IllegalArgumentException if {@code id} is not of the entity's id type, or is text that is
     *     empty or not valid Unicode
     */
    public Object checkId(Object id) {
        Objects.requireNonNull(id, "id");
        if (!idType.isInstance(id)) {
            throw new IllegalArgumentException("id " + id + " is a " + id.getClass().getName() + ", but the id of " + name + " is a "
                    + idType.getName());
        }
        if (id instanceof String s) {
            WriteRule.checkKey("id", s);
        }
        return id;
    }

    /**
     * {@code values} checked against the metamodel, in iteration order.
     *
     * @param required whether at least one value must be given
     * @throws IllegalArgumentException if a name is not a singular attribute of the entity, is the id,
     *     fence, tombstone or version attribute, or a value is not of the attribute's type
     */
    public Map<String, Object> checkValues(Map<String, ?> values, boolean required) {
        Objects.requireNonNull(values, "values");
        if (required && values.isEmpty()) {
            throw new IllegalArgumentException("values must name at least one attribute to set");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        values.forEach((attribute, value) -> {
            Objects.requireNonNull(attribute, "attribute name");
            if (attribute.equals(id) || attribute.equals(fence) || attribute.equals(tombstone) || attribute.equals(version)) {
                throw new IllegalArgumentException("values must not set the id, fence, tombstone or @Version attribute ('" + attribute
                        + "'); fence-guard sets those itself");
            }
            Attribute<?, ?> a;
            try {
                a = entity.getAttribute(attribute);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("'" + attribute + "' is not an attribute of " + name, e);
            }
            if (!(a instanceof SingularAttribute<?, ?>)) {
                throw new IllegalArgumentException("attribute " + name + "." + attribute + " is a collection; fenced writes set singular attributes only");
            }
            Class<?> type = a.getJavaType();
            if (value == null ? type.isPrimitive() : !boxed(type).isInstance(value)) {
                throw new IllegalArgumentException("value for " + name + "." + attribute + " must be a " + type.getName() + ", was "
                        + (value == null ? "null" : "a " + value.getClass().getName()));
            }
            out.put(attribute, value);
        });
        return out;
    }

    /**
     * The id of {@code instance}.
     *
     * @throws IllegalArgumentException if it is not an instance of the entity, or has no id
     */
    public Object idOf(Object instance) {
        Objects.requireNonNull(instance, "entity");
        if (!entity.getJavaType().isInstance(instance)) {
            throw new IllegalArgumentException("a " + instance.getClass().getName() + " is not a " + name);
        }
        Object id = util.getIdentifier(instance);
        if (id == null) {
            throw new IllegalArgumentException("the " + name + " to save has no id; a fenced save needs an assigned id");
        }
        return id;
    }

    /**
     * The values of {@code instance}'s basic attributes, except the id, fence, tombstone and version.
     *
     * @throws IllegalArgumentException if the entity has singular attributes that are not basic
     */
    public Map<String, Object> valuesOf(Object instance) {
        if (unsaveable != null) {
            throw new IllegalArgumentException("a fenced save writes basic attributes only, and " + name + "." + unsaveable
                    + " is an association or embeddable; use a fenced upsert with the values");
        }
        // A proxy (getReference, a lazy association) holds no state of its own: read the instance behind
        // it, loading it if need be, as a repository's save would.
        Object state;
        try {
            state = Hibernate.unproxy(instance);
        } catch (LazyInitializationException e) {
            throw new IllegalArgumentException("the " + name + " to save is a proxy that was never loaded and whose session is closed; "
                    + "save a loaded instance", e);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        for (String a : saved) {
            out.put(a, persister.getPropertyValue(state, a));
        }
        return out;
    }

    // --- statements ---

    /**
     * {@code update E e set <values>, e.fence = :fence[, e.version + 1] where e.id = :id and <rule>}, and,
     * when {@code liveOnly}, {@code and <not deleted>}.
     */
    public String update(List<String> attributes, boolean liveOnly) {
        List<String> set = new ArrayList<>();
        for (int i = 0; i < attributes.size(); i++) {
            set.add(path(attributes.get(i)) + " = :v" + i);
        }
        set.add(path(fence) + " = :fence");
        return updateWhere(set, admits(true) + (liveOnly ? notDeleted() : ""));
    }

    /** {@code update E e set e.tombstone = true, e.fence = :fence .. where e.id = :id and <rule>}: a delete of an existing row. */
    public String markDeleted() {
        return updateWhere(List.of(path(tombstone) + " = true", path(fence) + " = :fence"), admits(true));
    }

    /** {@code update E e set e.fence = :fence .. where e.id = :id and e.tombstone = true and <rule>}: a claim that raises a tombstone. */
    public String raiseTombstone() {
        return updateWhere(List.of(path(fence) + " = :fence"), path(tombstone) + " = true and " + admits(true));
    }

    private String updateWhere(List<String> set, String condition) {
        List<String> all = new ArrayList<>(set);
        if (version != null) {
            all.add(path(version) + " = coalesce(" + path(version) + ", 0) + 1");
        }
        return "update " + name + " " + ALIAS + " set " + String.join(", ", all) + " where " + path(id) + " = :id and " + condition;
    }

    /**
     * {@code insert into E (id, <values>, fence[, tombstone]) values (..) on conflict (id) do update set
     * <values> = excluded.., fence = excluded.fence[, tombstone = false][, version + 1] where <rule>}.
     * Hibernate adds the version attribute, with its initial value, to the insert itself.
     */
    public String upsert(List<String> attributes) {
        List<String> columns = new ArrayList<>(List.of(id));
        List<String> values = new ArrayList<>(List.of(":id"));
        List<String> set = new ArrayList<>();
        for (int i = 0; i < attributes.size(); i++) {
            columns.add(attributes.get(i));
            values.add(":v" + i);
            set.add(attributes.get(i) + " = excluded." + attributes.get(i));
        }
        columns.add(fence);
        values.add(":fence");
        set.add(fence + " = excluded." + fence);
        if (tombstone != null) {
            columns.add(tombstone);
            values.add("false");
            set.add(tombstone + " = false");
        }
        if (version != null) {
            set.add(version + " = coalesce(" + version + ", 0) + 1");
        }
        return "insert into " + name + " (" + String.join(", ", columns) + ") values (" + String.join(", ", values) + ") on conflict ("
                + id + ") do update set " + String.join(", ", set) + " where " + admits(false);
    }

    /**
     * {@code insert into E (id, fence, tombstone, <placeholders>) values (:id, :fence, true, ..) on conflict (id)
     * do nothing}: the tombstone of an id that has no row. Run only after a read found no row, so that
     * the columns of an existing row are never re-checked against the table's constraints.
     */
    public String insertTombstone(List<String> placeholders) {
        List<String> columns = new ArrayList<>(List.of(id, fence, tombstone));
        List<String> values = new ArrayList<>(List.of(":id", ":fence", "true"));
        for (int i = 0; i < placeholders.size(); i++) {
            columns.add(placeholders.get(i));
            values.add(":v" + i);
        }
        return "insert into " + name + " (" + String.join(", ", columns) + ") values (" + String.join(", ", values)
                + ") on conflict (" + id + ") do nothing";
    }

    /** {@code select e.fence[, e.tombstone] from E e where e.id = :id}. */
    public String read() {
        return "select " + path(fence) + (tombstone != null ? ", " + path(tombstone) : "") + " from " + name + " " + ALIAS + " where "
                + path(id) + " = :id";
    }

    /** A row as read back: its stored fence, and whether it is a tombstone. */
    public record Row(long fence, boolean deleted) {}

    /** The row in a result of {@link #read()}. */
    public Row row(Object result) {
        if (result instanceof Object[] columns) {
            return new Row(WriteRule.decode(columns[0]), Boolean.TRUE.equals(columns[1]));
        }
        return new Row(WriteRule.decode(result), false);
    }

    private String admits(boolean qualified) {
        String stored = "coalesce(" + (qualified ? path(fence) : fence) + ", " + (rule.encoding() == FenceEncoding.INTEGER ? "0" : "'"
                + rule.zero() + "'") + ")";
        return stored + (rule.policy() == FencePolicy.SAME_OR_NEWER ? " <= " : " < ") + ":fence";
    }

    private String notDeleted() {
        return tombstone == null ? "" : " and (" + path(tombstone) + " is null or " + path(tombstone) + " = false)";
    }

    private static String path(String attribute) {
        return ALIAS + "." + attribute;
    }

    private static Class<?> boxed(Class<?> type) {
        if (!type.isPrimitive()) {
            return type;
        }
        return switch (type.getName()) {
            case "long" -> Long.class;
            case "int" -> Integer.class;
            case "short" -> Short.class;
            case "byte" -> Byte.class;
            case "boolean" -> Boolean.class;
            case "char" -> Character.class;
            case "double" -> Double.class;
            case "float" -> Float.class;
            default -> type;
        };
    }
}
