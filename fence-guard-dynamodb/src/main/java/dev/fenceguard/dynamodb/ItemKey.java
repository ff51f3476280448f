package dev.fenceguard.dynamodb;

import dev.fenceguard.dynamodb.internal.Attributes;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The item a fenced write targets: a table and the item's primary key (a partition key, and a sort key
 * where the table has one). Key values are strings, numbers or bytes, as DynamoDB keys are.
 *
 * <pre>{@code
 * ItemKey order = ItemKey.of("orders", "id", "42");
 * ItemKey line = ItemKey.of("order_lines", "orderId", "42", "line", 3);
 * }</pre>
 *
 * Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class ItemKey {

    private final String table;
    private final Map<String, AttributeValue> key;

    private ItemKey(String table, Map<String, AttributeValue> key) {
        this.table = table;
        this.key = java.util.Collections.unmodifiableMap(key);
    }

    /**
     * The item of {@code table} whose partition key {@code attribute} is {@code value}.
     *
     * @param value a {@code String}, a {@code Number}, bytes, or an {@link AttributeValue} of type S, N or B
     * @throws IllegalArgumentException if {@code table} is not a DynamoDB table name, {@code attribute} is
     *     empty, or {@code value} is not a key type
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public static ItemKey of(String table, String attribute, Object value) {
        Map<String, AttributeValue> key = new LinkedHashMap<>();
        put(key, attribute, value);
        return new ItemKey(Attributes.requireTableName("table", table), key);
    }

    /**
     * The item of {@code table} with partition key {@code partitionAttribute = partition} and sort key
     * {@code sortAttribute = sort}.
     *
     * @throws IllegalArgumentException if {@code table} is not a DynamoDB table name, an attribute name is
     *     empty, the two names are equal, or a value is not a key type
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public static ItemKey of(String table, String partitionAttribute, Object partition, String sortAttribute, Object sort) {
        Map<String, AttributeValue> key = new LinkedHashMap<>();
        put(key, partitionAttribute, partition);
        if (key.containsKey(Objects.requireNonNull(sortAttribute, "sortAttribute"))) {
            throw new IllegalArgumentException("sortAttribute must differ from partitionAttribute '" + partitionAttribute + "'");
        }
        put(key, sortAttribute, sort);
        return new ItemKey(Attributes.requireTableName("table", table), key);
    }

    private static void put(Map<String, AttributeValue> key, String attribute, Object value) {
        Objects.requireNonNull(attribute, "attribute");
        if (attribute.isEmpty()) {
            throw new IllegalArgumentException("a key attribute name must be non-empty");
        }
        AttributeValue v = Attributes.of("key value of '" + attribute + "'", value);
        if (v.s() == null && v.n() == null && v.b() == null) {
            throw new IllegalArgumentException("key value of '" + attribute + "' must be a string, a number or bytes (S, N or B), was "
                    + v.type());
        }
        key.put(attribute, v);
    }

    /**
     * The table.
     *
     * @since 0.1
     */
    public String table() {
        return table;
    }

    /**
     * The primary key, as the SDK takes it (unmodifiable).
     *
     * @since 0.1
     */
    public Map<String, AttributeValue> key() {
        return key;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ItemKey other && table.equals(other.table) && key.equals(other.key);
    }

    @Override
    public int hashCode() {
        return Objects.hash(table, key);
    }

    /** {@code table[attribute=value, ...]}, the resource name in write outcomes. */
    @Override
    public String toString() {
        return table + key.entrySet().stream().map(e -> e.getKey() + "=" + text(e.getValue()))
                .collect(Collectors.joining(", ", "[", "]"));
    }

    private static String text(AttributeValue v) {
        return v.s() != null ? v.s() : v.n() != null ? v.n() : "<" + v.b().asByteArray().length + " bytes>";
    }
}
