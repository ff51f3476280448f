package dev.fenceguard.jooq;

import dev.fenceguard.core.internal.SqlIdentifiers;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jooq.Field;
import org.jooq.impl.DSL;

/**
 * The column values a fenced write sets, by jOOQ {@link Field} or by plain column name. Immutable;
 * {@code and(..)} returns a new instance.
 *
 * <pre>{@code
 * Assignments typed = Assignments.of(ORDERS.STATUS, "paid").and(ORDERS.PAID_AT, now);   // jOOQ generated fields
 * Assignments named = Assignments.of("status", "paid").and("paid_at", now);             // plain column names
 * }</pre>
 *
 * <p>Column names are validated as plain SQL identifiers and quoted; values are always bound, never
 * rendered into SQL. Strings containing NUL (which PostgreSQL cannot store) are refused up front.
 *
 * @since 0.1
 */
public final class Assignments {

    /**
     * No values: what a claim or delete without placeholder values assigns, and what {@code of(..)} adds to
     * (code that builds its assignments per call then makes one map and one instance, not two).
     */
    static final Assignments NONE = new Assignments(new LinkedHashMap<>());

    private final Map<Field<?>, Object> values;
    /**
     * The assigned columns in order, made on first use. A write needs them as a list; an instance kept as a
     * constant is written many times. Racy but safe: the list is immutable, and two threads at most make it twice.
     */
    private List<Field<?>> columns;
    /** The statement a writer last ran these columns as; see {@link FencedWriter}. Racy like {@link #columns}. */
    FencedWriter.LastShape lastShape;

    private Assignments(Map<Field<?>, Object> values) {
        this.values = Collections.unmodifiableMap(values);
    }

    /**
     * One value for a jOOQ field.
     *
     * @throws IllegalArgumentException if {@code value} is a string containing NUL
     */
    public static <T> Assignments of(Field<T> field, T value) {
        return NONE.and(field, value);
    }

    /**
     * One value for a column.
     *
     * @throws IllegalArgumentException if {@code column} is not a plain SQL identifier or {@code value}
     *     is a string containing NUL
     */
    public static Assignments of(String column, Object value) {
        return NONE.and(column, value);
    }

    /**
     * Values for several columns, in the map's iteration order.
     *
     * @throws IllegalArgumentException if the map is empty, a name is not a plain SQL identifier, or a
     *     value is a string containing NUL
     */
    public static Assignments of(Map<String, ?> columns) {
        if (columns.isEmpty()) {
            throw new IllegalArgumentException("assignments must set at least one column");
        }
        Assignments out = NONE;
        for (Map.Entry<String, ?> e : columns.entrySet()) {
            out = out.and(e.getKey(), e.getValue());
        }
        return out;
    }

    /** This plus one value for a jOOQ field (replacing an earlier value for the same field). */
    public <T> Assignments and(Field<T> field, T value) {
        Objects.requireNonNull(field, "field");
        checkValue(field.getName(), value);
        Map<Field<?>, Object> copy = new LinkedHashMap<>(values);
        copy.put(field, value);
        return new Assignments(copy);
    }

    /** This plus one value for a column (replacing an earlier value for the same column). */
    public Assignments and(String column, Object value) {
        SqlIdentifiers.require("column", column);
        checkValue(column, value);
        Map<Field<?>, Object> copy = new LinkedHashMap<>(values);
        copy.put(DSL.field(DSL.name(column)), value);
        return new Assignments(copy);
    }

    /** The values by field, in insertion order. */
    public Map<Field<?>, Object> values() {
        return values;
    }

    /** The assigned columns, in insertion order. */
    List<Field<?>> columns() {
        List<Field<?>> c = columns;
        if (c == null) {
            c = List.copyOf(values.keySet());
            columns = c;
        }
        return c;
    }

    private static void checkValue(String column, Object value) {
        if (value instanceof CharSequence s && s.toString().indexOf('\0') >= 0) {
            throw new IllegalArgumentException("value for column '" + column + "' contains NUL (U+0000), which PostgreSQL "
                    + "cannot store in text");
        }
    }

    @Override
    public String toString() {
        return "Assignments" + values.keySet();
    }
}
