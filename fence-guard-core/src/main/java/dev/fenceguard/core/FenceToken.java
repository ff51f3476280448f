package dev.fenceguard.core;

import java.util.Objects;

/**
 * A fencing token: the number a lock backend hands out with every successful acquisition, greater
 * than every token issued before for the same lock key.
 *
 * <p>A resource that remembers the highest token it has accepted can refuse writes that carry a
 * lower one, which is the only reliable way to stop a "zombie" holder whose lease expired while it
 * was paused. Tokens of different lock keys are not comparable: guard each resource with exactly one
 * lock key.
 *
 * <p>Valid values are {@value #MIN_VALUE} to {@value #MAX_VALUE} (9e14). {@link #toString()} gives
 * the value as 15 zero-padded digits, so the text form sorts exactly like the number and can be
 * stored in a {@code CHAR(15)} column or a string field; {@link #parse(CharSequence)} accepts only
 * that form.
 *
 * <pre>{@code
 * FenceToken t = FenceToken.of(42);
 * t.toString();                         // "000000000000042"
 * FenceToken.parse("000000000000042");  // == t
 * }</pre>
 *
 * @param value the token, {@value #MIN_VALUE} to {@value #MAX_VALUE}
 * @since 0.1
 */
public record FenceToken(long value) implements Comparable<FenceToken> {

    /** The smallest token a backend issues. */
    public static final long MIN_VALUE = 1L;

    /** The largest token a backend issues; an acquisition that would need a larger one fails. */
    public static final long MAX_VALUE = 900_000_000_000_000L;

    /**
     * Above this value fence-guard logs a warning (once per key and process) and counts it: the key
     * is on its way to exhaustion and should be retired or its counter reviewed.
     */
    public static final long WARN_THRESHOLD = 90_000_000_000_000L;

    /** Length of the text form. */
    public static final int TEXT_LENGTH = 15;

    /**
     * @throws IllegalArgumentException if {@code value} is outside {@value #MIN_VALUE}..{@value #MAX_VALUE}
     */
    public FenceToken {
        if (value < MIN_VALUE || value > MAX_VALUE) {
            throw new IllegalArgumentException(
                    "fence token must be between " + MIN_VALUE + " and " + MAX_VALUE + ", was " + value);
        }
    }

    /**
     * Returns the token with the given value.
     *
     * @throws IllegalArgumentException if {@code value} is outside {@value #MIN_VALUE}..{@value #MAX_VALUE}
     */
    public static FenceToken of(long value) {
        return new FenceToken(value);
    }

    /**
     * Parses the 15-digit text form produced by {@link #toString()}.
     *
     * <p>Strict: exactly {@value #TEXT_LENGTH} ASCII digits, no sign, no white space, value in range.
     *
     * @throws NullPointerException if {@code text} is null
     * @throws IllegalArgumentException if {@code text} is not exactly 15 ASCII digits or its value is
     *     out of range; the message quotes the offending text (shortened when long)
     */
    public static FenceToken parse(CharSequence text) {
        Objects.requireNonNull(text, "text");
        if (text.length() != TEXT_LENGTH) {
            throw new IllegalArgumentException("fence token text must be exactly " + TEXT_LENGTH
                    + " digits, was " + text.length() + " characters: " + quote(text));
        }
        long value = 0;
        for (int i = 0; i < TEXT_LENGTH; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                throw new IllegalArgumentException("fence token text must contain only ASCII digits, found "
                        + describe(c) + " at index " + i + ": " + quote(text));
            }
            value = value * 10 + (c - '0');
        }
        if (value < MIN_VALUE || value > MAX_VALUE) {
            throw new IllegalArgumentException("fence token must be between " + MIN_VALUE + " and "
                    + MAX_VALUE + ", was " + value + " (text " + quote(text) + ")");
        }
        return new FenceToken(value);
    }

    /** Whether this token is above {@link #WARN_THRESHOLD}. */
    public boolean isNearExhaustion() {
        return value > WARN_THRESHOLD;
    }

    @Override
    public int compareTo(FenceToken other) {
        return Long.compare(value, other.value);
    }

    /** The 15-digit zero-padded text form, e.g. {@code 000000000000042}. */
    @Override
    public String toString() {
        String digits = Long.toString(value);
        return "0".repeat(TEXT_LENGTH - digits.length()) + digits;
    }

    private static String quote(CharSequence text) {
        String s = text.length() > 40 ? text.subSequence(0, 40) + "..." : text.toString();
        return "'" + s + "'";
    }

    private static String describe(char c) {
        return Character.isISOControl(c) || Character.isWhitespace(c) || Character.isSurrogate(c)
                ? String.format("U+%04X", (int) c)
                : "'" + c + "'";
    }
}
