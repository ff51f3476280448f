package dev.fenceguard.core.idempotency;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Turns a work's result into the bytes an idempotency store keeps, and back for a replay. The bytes
 * outlive your release: a codec must read what earlier versions of it wrote for as long as the
 * store's retention.
 *
 * @param <T> the result type
 * @since 0.1
 */
public interface ResultCodec<T> {

    /** The bytes to store for {@code value}; never null. */
    byte[] encode(T value);

    /** The value stored as {@code bytes}. */
    T decode(byte[] bytes);

    /** Bytes as they are (copied). */
    static ResultCodec<byte[]> bytes() {
        return new ResultCodec<>() {
            @Override
            public byte[] encode(byte[] value) {
                return Objects.requireNonNull(value, "value").clone();
            }

            @Override
            public byte[] decode(byte[] bytes) {
                return bytes.clone();
            }
        };
    }

    /** Text as UTF-8. */
    static ResultCodec<String> utf8() {
        return new ResultCodec<>() {
            @Override
            public byte[] encode(String value) {
                return Objects.requireNonNull(value, "value").getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public String decode(byte[] bytes) {
                return new String(bytes, StandardCharsets.UTF_8);
            }
        };
    }
}
