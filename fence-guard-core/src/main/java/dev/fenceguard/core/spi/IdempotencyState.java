package dev.fenceguard.core.spi;

/**
 * Where an idempotent operation stands in an {@link IdempotencyBackend}. Each has a one-letter code,
 * which is what the backends store (a column, a hash field, a document field).
 *
 * @since 0.1
 */
public enum IdempotencyState {
    /** A holder has claimed the key and is running the work; the entry names its fence and claim expiry. */
    IN_PROGRESS('P'),
    /** The work succeeded; the entry holds its encoded result, replayed to every retry. */
    COMPLETED('C'),
    /** The work failed in a way worth retrying: the next claim takes the key over. */
    FAILED_RETRYABLE('R'),
    /** The work failed for good; the entry holds the reason, replayed to every retry. */
    FAILED_FINAL('F');

    private final char code;

    IdempotencyState(char code) {
        this.code = code;
    }

    /** The stored one-letter code. */
    public char code() {
        return code;
    }

    /** Whether retries get this outcome back rather than running the work again. */
    public boolean isFinal() {
        return this == COMPLETED || this == FAILED_FINAL;
    }

    /**
     * The state stored as {@code code}.
     *
     * @throws IllegalArgumentException if {@code code} is none of P, C, R, F
     */
    public static IdempotencyState ofCode(char code) {
        for (IdempotencyState s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown idempotency state code '" + code + "'");
    }
}
