package dev.fenceguard.dynamodb.internal;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** Java values to DynamoDB attribute values, checked before any I/O. */
public final class Attributes {

    private Attributes() {}

    /**
     * {@code value} as an attribute value: an {@link AttributeValue} as it is; a {@code String} as
     * {@code S}; a {@code Number} as {@code N}; a {@code Boolean} as {@code BOOL}; {@code byte[]},
     * {@link SdkBytes} or {@link ByteBuffer} as {@code B}.
     *
     * @throws IllegalArgumentException for any other type (the setting's name in the message)
     * @throws NullPointerException for null
     */
    public static AttributeValue of(String what, Object value) {
        Objects.requireNonNull(value, what);
        // Type tests, not a pattern switch: a switch over types bootstraps classes at its first run (issue #31's first
        // call after the warm-up), and this runs on every fenced write.
        if (value instanceof AttributeValue a) {
            return a;
        }
        if (value instanceof String s) {
            return AttributeValue.fromS(s);
        }
        if (value instanceof Number n) {
            return AttributeValue.fromN(n.toString());
        }
        if (value instanceof Boolean b) {
            return AttributeValue.fromBool(b);
        }
        if (value instanceof byte[] bytes) {
            return AttributeValue.fromB(SdkBytes.fromByteArray(bytes));
        }
        if (value instanceof SdkBytes bytes) {
            return AttributeValue.fromB(bytes);
        }
        if (value instanceof ByteBuffer buffer) {
            return AttributeValue.fromB(SdkBytes.fromByteBuffer(buffer));
        }
        throw new IllegalArgumentException(what + " must be an AttributeValue, String, Number, Boolean, byte[],"
                + " SdkBytes or ByteBuffer, was a " + value.getClass().getName());
    }

    /** Every value of {@code map} converted by {@link #of}, in the map's order; the map is copied. */
    public static Map<String, AttributeValue> ofMap(String what, Map<String, ?> map) {
        Objects.requireNonNull(map, what);
        Map<String, AttributeValue> out = new LinkedHashMap<>();
        map.forEach((name, value) -> {
            Objects.requireNonNull(name, what + " has a null attribute name");
            if (name.isEmpty()) {
                throw new IllegalArgumentException(what + " has an empty attribute name");
            }
            out.put(name, of(what + "." + name, value));
        });
        return out;
    }

    /** The number an {@code N} attribute holds, or {@code fallback} when absent. */
    public static long number(Map<String, AttributeValue> item, String name, long fallback) {
        AttributeValue v = item == null ? null : item.get(name);
        return v == null || v.n() == null ? fallback : Long.parseLong(v.n());
    }

    /** The text an {@code S} attribute holds, or null when absent. */
    public static String text(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item == null ? null : item.get(name);
        return v == null ? null : v.s();
    }

    /** An {@code N} attribute. */
    public static AttributeValue n(long value) {
        return AttributeValue.fromN(Long.toString(value));
    }

    /** A DynamoDB table name: 3 to 255 characters of {@code [a-zA-Z0-9_.-]}. */
    public static String requireTableName(String setting, String table) {
        Objects.requireNonNull(table, setting);
        if (table.length() < 3 || table.length() > 255 || !table.chars().allMatch(c -> c < 128
                && (Character.isLetterOrDigit(c) || c == '_' || c == '.' || c == '-'))) {
            throw new IllegalArgumentException(setting + " must be a DynamoDB table name, 3 to 255 characters of"
                    + " a-z, A-Z, 0-9, '_', '-' and '.', was '" + table + "'");
        }
        return table;
    }
}
