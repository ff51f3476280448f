package dev.fenceguard.core.singleflight;

import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Turns a flight's result into the bytes a {@link dev.fenceguard.core.spi.FlightStore} keeps, and back.
 * Every process that runs a flight key must use the same codec for it. Each caller decodes the shared
 * bytes itself, so callers never share one mutable result object.
 *
 * <pre>{@code
 * ResultCodec<Instant> instants = ResultCodec.of(t -> t.toString().getBytes(StandardCharsets.UTF_8),
 *         b -> Instant.parse(new String(b, StandardCharsets.UTF_8)));
 * }</pre>
 *
 * <p>A JSON mapper fits the same way, for example Jackson's:
 * {@code ResultCodec.of(mapper::writeValueAsBytes, b -> mapper.readValue(b, Report.class))}.
 *
 * @param <T> the result type
 * @since 0.1
 */
public interface ResultCodec<T> {

    /** The bytes of {@code value}; must not return null. */
    byte[] encode(T value) throws Exception;

    /** The value of {@code bytes}, which {@link #encode} produced (in this or another process). */
    T decode(byte[] bytes) throws Exception;

    /** Bytes as they are (copied, so the caller's array is never shared). */
    static ResultCodec<byte[]> bytes() {
        return of(byte[]::clone, byte[]::clone);
    }

    /** Strings as UTF-8; decoding refuses malformed input rather than guessing. */
    static ResultCodec<String> utf8() {
        return of(s -> s.getBytes(StandardCharsets.UTF_8), b -> {
            try {
                return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b)).toString();
            } catch (CharacterCodingException e) {
                throw new IllegalArgumentException("stored result is not UTF-8", e);
            }
        });
    }

    /**
     * A codec from two functions.
     *
     * @throws NullPointerException if either is null
     */
    static <T> ResultCodec<T> of(Encoder<T> encoder, Decoder<T> decoder) {
        Objects.requireNonNull(encoder, "encoder");
        Objects.requireNonNull(decoder, "decoder");
        return new ResultCodec<>() {
            @Override
            public byte[] encode(T value) throws Exception {
                return encoder.encode(value);
            }

            @Override
            public T decode(byte[] bytes) throws Exception {
                return decoder.decode(bytes);
            }
        };
    }

    /** The encoding half of {@link #of}. */
    @FunctionalInterface
    interface Encoder<T> {
        byte[] encode(T value) throws Exception;
    }

    /** The decoding half of {@link #of}. */
    @FunctionalInterface
    interface Decoder<T> {
        T decode(byte[] bytes) throws Exception;
    }
}
