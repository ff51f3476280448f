package dev.fenceguard.jooq.internal;

import dev.fenceguard.core.internal.Horizon;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.spi.WriteRule;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Supplier;
import org.jooq.Condition;
import org.jooq.ContextConverter;
import org.jooq.DSLContext;
import org.jooq.DataType;
import org.jooq.Field;
import org.jooq.Param;
import org.jooq.Query;
import org.jooq.Table;
import org.jooq.conf.ParamType;
import org.jooq.conf.Settings;
import org.jooq.conf.StatementType;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The statements of one fenced table, built in one place and rendered once per shape: a shape is an
 * operation and the columns it assigns (and, for multi-key statements, a key count), and its rendered
 * SQL is kept with the position of each bind value, so a write only binds values and runs (building,
 * rendering and running each statement through jOOQ cost fenced {@code UPDATE}s about a tenth of their
 * throughput against a plain prepared statement; see {@link Session} for the running). Also the
 * table's definition (columns, write rule, dialect), the checks of a write's arguments, and how rows
 * read back are decoded. Immutable apart from the cache; thread-safe.
 *
 * <p>Bind values are named slots ({@code :fg_0}, ...): {@link #KEY}, {@link #FENCE}, {@link #MARK}, then
 * the assigned values from {@link #FIRST_VALUE}, then further keys. The per-call array of values is
 * indexed by slot.
 */
public final class FencedStatements {

    /** Slot of the key. */
    public static final int KEY = 0;
    /** Slot of the presented fence, encoded. */
    public static final int FENCE = 1;
    /**
     * Slot of a number a dialect's statement may report back to tell that it matched the row (MySQL's
     * {@code LAST_INSERT_ID(:mark)}); set by the dialect when it runs the statement, unused otherwise.
     */
    public static final int MARK = 2;
    /** Slot of the first assigned value; keys of multi-key statements follow the values. */
    public static final int FIRST_VALUE = 3;

    /**
     * Cached shapes per table. A table sees a handful of operations times the column sets its callers
     * assign; this bound only keeps a caller that assigns ever new column sets from growing the cache
     * without end (a shape evicted is rendered again when next used).
     */
    static final int MAX_SHAPES = 256;

    private static final String SLOT = "fg_";

    private final Table<?> table;
    private final Field<Object> key;
    private final Field<Object> fence;
    private final Field<Boolean> tombstone;
    private final WriteRule rule;
    private final FencingDialect dialect;
    /** Null when the table has no horizon. */
    private final Horizon horizon;
    private final String name;
    /** {@code name[key=}, the start of every {@link #resource}. */
    private final String resourcePrefix;
    private final Rendering defaultRendering;
    private final ConcurrentMap<ShapeKey, StatementShape> shapes = new ConcurrentHashMap<>();

    /**
     * @param tombstone the tombstone column, or empty
     */
    public FencedStatements(Table<?> table, Field<Object> key, Field<Object> fence, Optional<Field<Boolean>> tombstone, WriteRule rule,
            FencingDialect dialect) {
        this(table, key, fence, tombstone, rule, dialect, Optional.empty());
    }

    /**
     * @param tombstone the tombstone column, or empty
     * @param horizon the horizon writes are held to and purges use, or empty
     */
    public FencedStatements(Table<?> table, Field<Object> key, Field<Object> fence, Optional<Field<Boolean>> tombstone, WriteRule rule,
            FencingDialect dialect, Optional<Horizon> horizon) {
        this.horizon = horizon.orElse(null);
        this.table = table;
        this.key = key;
        this.fence = fence;
        this.tombstone = tombstone.orElse(null);
        this.rule = rule;
        this.dialect = dialect;
        this.name = String.join(".", table.getQualifiedName().getName());
        this.resourcePrefix = name + "[" + key.getName() + "=";
        DSLContext renderer = DSL.using(dialect.jooqDialect());
        this.defaultRendering = new Rendering(fingerprint(renderer), renderer);
    }

    // --- the definition ---

    public Table<?> table() {
        return table;
    }

    public Field<Object> key() {
        return key;
    }

    public Field<Object> fence() {
        return fence;
    }

    public Optional<Field<Boolean>> tombstone() {
        return Optional.ofNullable(tombstone);
    }

    public WriteRule rule() {
        return rule;
    }

    public FencingDialect dialect() {
        return dialect;
    }

    /** The horizon, if the table has one. */
    public Optional<Horizon> horizon() {
        return Optional.ofNullable(horizon);
    }

    /** The table's qualified name. */
    public String name() {
        return name;
    }

    /** The write rule on the stored fence against {@code presented}: {@code COALESCE(fence, 0) <= presented}. */
    public Condition admits(Field<Object> presented) {
        Field<Object> stored = DSL.coalesce(fence, DSL.inline(rule.zero(), fence));
        return rule.policy() == FencePolicy.SAME_OR_NEWER ? stored.le(presented) : stored.lt(presented);
    }

    /** Excludes tombstoned rows (no condition when there is no tombstone column). */
    public Condition notDeleted() {
        return tombstone == null ? DSL.noCondition() : DSL.coalesce(tombstone, DSL.inline(false)).isFalse();
    }

    /** The {@link #MARK} slot, a {@code BIGINT}. */
    public static Field<Long> markSlot() {
        return DSL.param(SLOT + MARK, SQLDataType.BIGINT);
    }

    /** A bind parameter for slot {@code index}, typed like {@code column}. */
    @SuppressWarnings("unchecked")
    public static Field<Object> slot(int index, Field<?> column) {
        return (Param<Object>) DSL.param(SLOT + index, column);
    }

    // --- arguments, checked before any SQL ---

    /**
     * {@code key} converted to the key column's type.
     *
     * @throws IllegalArgumentException if it cannot be, or is text a database cannot store
     */
    public Object checkKey(Object key) {
        Objects.requireNonNull(key, "key");
        Object converted;
        try {
            converted = this.key.getDataType().convert(key);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("key " + key + " cannot be converted to the key column's type "
                    + this.key.getType().getName() + ": " + e.getMessage(), e);
        }
        if (converted == null) { // jOOQ answers null, not an error, for text that is no number
            throw new IllegalArgumentException("key " + key + " cannot be converted to the key column's type "
                    + this.key.getType().getName());
        }
        if (converted instanceof CharSequence s) {
            WriteRule.checkTextKey("key", s.toString());
        }
        return converted;
    }

    /**
     * The per-call values of a write ({@link #KEY}, {@link #FENCE}, {@link #MARK}, then {@code values} from
     * {@link #FIRST_VALUE} on, then room for {@code keys} more keys), with each of {@code values} converted to
     * its column's type, as jOOQ would bind it. The key and fence slots are filled by {@link #bind}, once the
     * key is checked.
     *
     * @throws IllegalArgumentException if a column is the key, fence or tombstone column, or a value
     *     cannot be converted
     */
    public Object[] checkValues(Map<Field<?>, Object> values, int keys) {
        Object[] out = new Object[FIRST_VALUE + values.size() + keys];
        int i = FIRST_VALUE;
        for (Map.Entry<Field<?>, Object> e : values.entrySet()) {
            Field<?> column = e.getKey();
            Object value = e.getValue();
            String name = column.getName();
            if (name.equals(key.getName()) || name.equals(fence.getName()) || (tombstone != null && name.equals(tombstone.getName()))) {
                throw new IllegalArgumentException("assignments must not set the key, fence or tombstone column ('" + name
                        + "'); fence-guard sets those itself");
            }
            Object converted;
            try {
                converted = column.getDataType().convert(value);
            } catch (RuntimeException ex) {
                throw new IllegalArgumentException("value for column '" + name + "' cannot be converted to the column's type "
                        + column.getType().getName() + " (" + ex.getClass().getSimpleName() + ")", ex);
            }
            if (converted == null && value != null) {
                throw new IllegalArgumentException("value for column '" + name + "' cannot be converted to the column's type "
                        + column.getType().getName());
            }
            out[i++] = converted;
        }
        return out;
    }

    /**
     * The tombstone column.
     *
     * @throws IllegalStateException if the table has none
     */
    public Field<Boolean> requireTombstone(String operation) {
        if (tombstone == null) {
            throw new IllegalStateException("fenced " + operation + " of " + name + " needs a tombstone column "
                    + "(FencedTable.Builder.withTombstoneColumn): a hard DELETE would let a stale upsert bring the row back");
        }
        return tombstone;
    }

    /** How outcomes and errors name the row of {@code key}. */
    public String resource(Object key) {
        if (key instanceof Long || key instanceof Integer || key instanceof UUID) { // never longer than the limit below: no copy to measure
            return resourcePrefix + key + "]";
        }
        String k = String.valueOf(key);
        return resourcePrefix + (k.length() > 64 ? k.substring(0, 64) + "..." : k) + "]";
    }

    /**
     * {@code binds} (from {@link #checkValues}) with the key in {@link #KEY}, the encoded fence in {@link #FENCE} and
     * the fence as a number in {@link #MARK} (for the horizon's comparisons; MySQL sets its own mark).
     */
    public Object[] bind(Object[] binds, Object key, FenceToken fence) {
        binds[KEY] = key;
        binds[FENCE] = rule.encode(fence);
        binds[MARK] = fence.value();
        return binds;
    }

    // --- statement shapes ---

    /**
     * {@code UPDATE t SET <columns>, fence = :f WHERE key = :k AND <rule> AND <not deleted>}; the fence is
     * assigned last, as the dialect's {@link FencingDialect#assignedFence} has it.
     */
    public StatementShape update(List<Field<?>> columns, Rendering r) {
        return shape(r, Kind.UPDATE, columns, 0, () -> {
            Map<Field<?>, Object> set = assign(columns, FIRST_VALUE, false);
            set.put(fence, dialect.assignedFence(this));
            return DSL.update(table).set(set).where(key.eq(slot(KEY, key))).and(admits(slot(FENCE, fence))).and(notDeleted());
        });
    }

    /** {@code UPDATE t SET fence = :f WHERE key = :k AND <rule> AND <not deleted>}: a claim of a live row. */
    public StatementShape claim(Rendering r) {
        return update(List.of(), r);
    }

    /** {@code UPDATE t SET tombstone = true, fence = :f WHERE key = :k AND <rule>}: a delete of an existing row. */
    public StatementShape markDeleted(Rendering r) {
        Field<Boolean> deleted = requireTombstone("delete");
        return shape(r, Kind.MARK_DELETED, List.of(), 0, () -> {
            Map<Field<?>, Object> set = new LinkedHashMap<>();
            set.put(deleted, DSL.inline(true, deleted));
            set.put(fence, dialect.assignedFence(this));
            return DSL.update(table).set(set).where(key.eq(slot(KEY, key))).and(admits(slot(FENCE, fence)));
        });
    }

    /** The dialect's upsert of {@code columns} (and the fence; the tombstone cleared). */
    public StatementShape upsert(List<Field<?>> columns, Rendering r) {
        return shape(r, Kind.UPSERT, columns, 0, () -> {
            Map<Field<?>, Object> update = assign(columns, FIRST_VALUE, true);
            if (tombstone != null) {
                update.put(tombstone, DSL.inline(false, tombstone));
            }
            Map<Field<?>, Object> insert = new LinkedHashMap<>();
            insert.put(key, slot(KEY, key));
            insert.putAll(update);
            return dialect.upsertQuery(this, insert, update);
        });
    }

    /** {@code SELECT key, fence[, tombstone] FROM t WHERE key = :k}. */
    public StatementShape readRow(Rendering r) {
        return shape(r, Kind.READ_ROW, List.of(), 0, () -> DSL.select(rowFields()).from(table).where(key.eq(slot(KEY, key))));
    }

    /**
     * {@code SELECT key, fence[, tombstone] FROM t WHERE key IN (..)} for {@code count} keys in the slots from
     * {@link #FIRST_VALUE} on.
     */
    public StatementShape readRows(int count, Rendering r) {
        return shape(r, Kind.READ_ROWS, List.of(), count,
                () -> DSL.select(rowFields()).from(table).where(key.in(keySlots(FIRST_VALUE, count))));
    }

    /**
     * A statement of the dialect's own, cached like the shared ones under {@code variant} (a name unique
     * within the dialect), the assigned or placeholder {@code columns} and the key {@code count}.
     */
    public StatementShape custom(String variant, List<Field<?>> columns, int count, Rendering r, Supplier<Query> build) {
        return shape(r, Kind.CUSTOM, variant, columns, count, build);
    }

    /** A key count padded to a power of two, so that multi-key statements come in few shapes. */
    public static int padded(int count) {
        return count <= 1 ? 1 : Integer.highestOneBit(count - 1) << 1;
    }

    /** A row as read back: the key in the key column's type, the stored fence, whether it is a tombstone. */
    public record Row(Object key, long fence, boolean deleted) {}

    /** The row in {@code raw} from column {@code at} on (key, fence[, tombstone]); null if its key is null. */
    public Row row(Object[] raw, int at) {
        if (raw[at] == null) {
            return null;
        }
        return new Row(readKey(raw[at]), WriteRule.decode(raw[at + 1]),
                tombstone != null && isTrue(raw[at + 2]));
    }

    /** {@code raw}, a value read from the key column, in the key column's type. */
    public Object readKey(Object raw) {
        return key.getDataType().convert(raw);
    }

    /** Whether {@code raw}, a value of the tombstone column, reads as deleted. */
    public boolean isTrue(Object raw) {
        return tombstone != null && Boolean.TRUE.equals(tombstone.getDataType().convert(raw));
    }

    private List<Field<?>> rowFields() {
        List<Field<?>> fields = new ArrayList<>(List.of(key, fence));
        if (tombstone != null) {
            fields.add(tombstone);
        }
        return fields;
    }

    /** Slots {@code first} .. {@code first + count - 1}, each typed like the key column. */
    public List<Field<Object>> keySlots(int first, int count) {
        List<Field<Object>> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(slot(first + i, key));
        }
        return out;
    }

    /** {@code columns} set to their slots from {@code first} on, then (if {@code withFence}) the fence. */
    public Map<Field<?>, Object> assign(List<Field<?>> columns, int first, boolean withFence) {
        Map<Field<?>, Object> set = new LinkedHashMap<>();
        for (int i = 0; i < columns.size(); i++) {
            set.put(columns.get(i), slot(first + i, columns.get(i)));
        }
        if (withFence) {
            set.put(fence, slot(FENCE, fence));
        }
        return set;
    }

    // --- rendering and the cache ---

    /**
     * How statements are rendered for a caller: by default as fence-guard renders them in the dialect;
     * for a caller's {@code DSLContext} whose settings render the table differently (a schema mapping,
     * other quoting or name case), with those settings, cached under their own fingerprint.
     */
    public static final class Rendering {
        private final String fingerprint;
        private final DSLContext ctx;

        private Rendering(String fingerprint, DSLContext ctx) {
            this.fingerprint = fingerprint;
            this.ctx = ctx;
        }
    }

    /** Rendering with fence-guard's own settings (writes on a {@code Connection} or {@code DataSource}). */
    public Rendering defaultRendering() {
        return defaultRendering;
    }

    /** Rendering as {@code ctx} renders this table: the default one when that is the same. */
    public Rendering rendering(DSLContext ctx) {
        String fingerprint = fingerprint(ctx);
        if (fingerprint.equals(defaultRendering.fingerprint)) {
            return defaultRendering;
        }
        // Bind values must stay bind values and named slots must render as ":fg_N", whatever the caller's settings.
        Settings settings = ((Settings) ctx.settings().clone()).withParamType(ParamType.INDEXED)
                .withStatementType(StatementType.PREPARED_STATEMENT).withRenderNamedParamPrefix(":");
        return new Rendering(fingerprint, ctx.configuration().derive(settings).dsl());
    }

    /** What a context's settings change in how this table's names render (mapping, quoting, case). */
    private String fingerprint(DSLContext ctx) {
        return ctx.dialect() + " " + ctx.render(DSL.select(rowFields()).from(table));
    }

    private enum Kind { UPDATE, MARK_DELETED, UPSERT, READ_ROW, READ_ROWS, CUSTOM }

    /** A column of a shape: its name and the exact type it binds as (identity: types compare cheaply). */
    private record Column(List<String> name, DataType<?> type) {
        static List<Column> of(List<Field<?>> fields) {
            if (fields.isEmpty()) { // a claim's or delete's shape, or a row read: looked up on every such write
                return List.of();
            }
            List<Column> out = new ArrayList<>(fields.size());
            for (Field<?> f : fields) {
                out.add(new Column(List.of(f.getQualifiedName().getName()), f.getDataType()));
            }
            return out;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Column c && c.type == type && c.name.equals(name);
        }

        @Override
        public int hashCode() {
            return name.hashCode() * 31 + System.identityHashCode(type);
        }
    }

    private record ShapeKey(String rendering, Kind kind, String variant, List<Column> columns, int count) {}

    private StatementShape shape(Rendering r, Kind kind, List<Field<?>> columns, int count, Supplier<Query> build) {
        return shape(r, kind, "", columns, count, build);
    }

    private StatementShape shape(Rendering r, Kind kind, String variant, List<Field<?>> columns, int count, Supplier<Query> build) {
        ShapeKey k = new ShapeKey(r.fingerprint, kind, variant, Column.of(columns), count);
        StatementShape shape = shapes.get(k);
        if (shape == null) {
            shape = render(build.get(), r.ctx);
            if (shapes.size() >= MAX_SHAPES) {
                Iterator<ShapeKey> any = shapes.keySet().iterator();
                if (any.hasNext()) {
                    shapes.remove(any.next());
                }
            }
            shapes.put(k, shape); // two threads may render the same shape at once; both results are equal
        }
        return shape;
    }

    /** Shapes cached now; for tests. */
    int cachedShapes() {
        return shapes.size();
    }

    /**
     * Renders {@code q} with indexed parameters and finds which slot each {@code ?} stands for, from the
     * same statement rendered with named parameters. Every bind value must be a slot: the two renderings
     * are checked to agree, so a parameter that is not one fails here, once, instead of binding wrongly.
     */
    static StatementShape render(Query q, DSLContext ctx) {
        String indexed = ctx.render(q);
        String named = ctx.renderNamedParams(q);
        StringBuilder sql = new StringBuilder(indexed.length());
        List<Integer> slots = new ArrayList<>();
        char quote = 0; // inside a quoted identifier (" or MySQL's `) or a string literal, ":fg_" is text
        for (int i = 0; i < named.length(); i++) {
            char c = named.charAt(i);
            if (quote != 0) {
                quote = c == quote ? 0 : quote;
            } else if (c == '"' || c == '\'' || c == '`') {
                quote = c;
            } else if (c == ':' && named.startsWith(SLOT, i + 1)) {
                int start = i + 1 + SLOT.length();
                int end = start;
                while (end < named.length() && Character.isDigit(named.charAt(end))) {
                    end++;
                }
                slots.add(Integer.parseInt(named.substring(start, end)));
                sql.append('?');
                i = end - 1;
                continue;
            }
            sql.append(c);
        }
        if (!sql.toString().equals(indexed)) {
            throw new IllegalStateException("fence-guard could not place the bind values of a statement it built (a bind value"
                    + " that is not a slot?): " + indexed);
        }
        Map<String, Param<?>> params = ctx.extractParams(q);
        List<DataType<?>> types = new ArrayList<>(slots.size());
        boolean plainJdbc = true;
        for (int slot : slots) {
            DataType<?> type = params.get(SLOT + slot).getDataType();
            types.add(type);
            plainJdbc &= bindsAsJdbc(type);
        }
        return new StatementShape(indexed, slots.stream().mapToInt(Integer::intValue).toArray(), List.copyOf(types), plainJdbc);
    }

    /**
     * Whether jOOQ binds values of {@code type} as the driver would bind the Java value itself: no
     * converter, and one of jOOQ's own bindings (a custom binding may bind anything in any way).
     */
    private static boolean bindsAsJdbc(DataType<?> type) {
        ContextConverter<?, ?> converter = type.getConverter();
        return converter.fromType() == converter.toType() && type.getBinding().getClass().getName().startsWith("org.jooq.impl.DefaultBinding$");
    }
}
