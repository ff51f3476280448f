package dev.fenceguard.core;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.Objects;

/**
 * The name of a lock: a validated, NFC-normalised string of 1 to {@value #MAX_UTF8_BYTES} UTF-8
 * bytes without NUL characters.
 *
 * <p>Normalising to NFC means two spellings of one text (say "é" as one code point or as "e" plus a
 * combining accent) name the same lock. Keys are validated before any I/O: every backend accepts
 * exactly the keys this class accepts, and maps them to its own storage without collisions.
 *
 * <p>Keys sort by their Unicode code points; {@link LockClient#acquireAll} takes locks in that order.
 *
 * @param value the normalised key
 * @since 0.1
 */
public record LockKey(String value) implements Comparable<LockKey> {

    /** The longest key, in UTF-8 bytes after NFC normalisation. */
    public static final int MAX_UTF8_BYTES = 512;

    /**
     * Validates {@code value}; it must already be in NFC (use {@link #of(String)} to normalise).
     *
     * @throws NullPointerException if {@code value} is null
     * @throws IllegalArgumentException if the key is empty, too long, contains NUL or an unpaired
     *     surrogate, or is not in NFC
     */
    public LockKey {
        Objects.requireNonNull(value, "lock key");
        // Fast path: ASCII without NUL is NFC and one byte a char, so only the slow path checks more.
        if (!isPlainAscii(value)) {
            String problem = problem(value);
            if (problem != null) {
                throw new IllegalArgumentException(problem);
            }
            if (!Normalizer.isNormalized(value, Normalizer.Form.NFC)) {
                throw new IllegalArgumentException("lock key must be NFC-normalised (use LockKey.of): " + preview(value));
            }
        }
    }

    /**
     * Normalises {@code value} to NFC and validates it.
     *
     * @throws NullPointerException if {@code value} is null
     * @throws IllegalArgumentException if the key is empty, longer than {@value #MAX_UTF8_BYTES} UTF-8
     *     bytes after normalisation, or contains NUL or an unpaired surrogate; the message says which
     */
    public static LockKey of(String value) {
        Objects.requireNonNull(value, "lock key");
        if (isPlainAscii(value)) {
            return new LockKey(value);
        }
        String problem = problem(value);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        return new LockKey(Normalizer.normalize(value, Normalizer.Form.NFC));
    }

    /** The key as UTF-8 bytes (a fresh array). */
    public byte[] utf8() {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public int compareTo(LockKey other) {
        // Code point order (== UTF-8 byte order), not String's UTF-16 order, so that every client,
        // in any language, can take multiple locks in the same global order.
        int i = 0;
        int j = 0;
        while (i < value.length() && j < other.value.length()) {
            int a = value.codePointAt(i);
            int b = other.value.codePointAt(j);
            if (a != b) {
                return Integer.compare(a, b);
            }
            i += Character.charCount(a);
            j += Character.charCount(b);
        }
        return Integer.compare(value.length() - i, other.value.length() - j);
    }

    @Override
    public String toString() {
        return value;
    }

    /** 1..512 chars, all in U+0001..U+007F: valid, already NFC, and as many UTF-8 bytes as chars. */
    private static boolean isPlainAscii(String s) {
        int n = s.length();
        if (n == 0 || n > MAX_UTF8_BYTES) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c == 0 || c > 0x7F) {
                return false;
            }
        }
        return true;
    }

    /** Returns what is wrong with {@code raw} as a key, or null; checks what NFC cannot repair. */
    private static String problem(String raw) {
        if (raw.isEmpty()) {
            return "lock key must not be empty";
        }
        int nul = raw.indexOf('\0');
        if (nul >= 0) {
            return "lock key must not contain NUL (U+0000), found at index " + nul + ": " + preview(raw);
        }
        int surrogate = dev.fenceguard.core.internal.Text.unpairedSurrogate(raw);
        if (surrogate >= 0) {
            return String.format("lock key must be valid Unicode, found an unpaired surrogate U+%04X at index %d: %s",
                    (int) raw.charAt(surrogate), surrogate, preview(raw));
        }
        // Normalisation can change the length (either way), so measure what will be stored.
        String nfc = Normalizer.normalize(raw, Normalizer.Form.NFC);
        int bytes = utf8Length(nfc);
        if (bytes > MAX_UTF8_BYTES) {
            return "lock key must be at most " + MAX_UTF8_BYTES + " UTF-8 bytes, was " + bytes + ": " + preview(raw);
        }
        return null;
    }

    private static int utf8Length(String s) {
        try {
            ByteBuffer encoded = StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(s));
            return encoded.remaining();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("lock key must be valid Unicode: " + preview(s), e);
        }
    }

    static String preview(String s) {
        StringBuilder out = new StringBuilder("'");
        int limit = Math.min(s.length(), 60);
        for (int i = 0; i < limit; i++) {
            char c = s.charAt(i);
            if (Character.isISOControl(c) || Character.isSurrogate(c)) {
                out.append(String.format("\\u%04X", (int) c));
            } else {
                out.append(c);
            }
        }
        if (s.length() > limit) {
            out.append("...(").append(s.length()).append(" chars)");
        }
        return out.append('\'').toString();
    }
}
