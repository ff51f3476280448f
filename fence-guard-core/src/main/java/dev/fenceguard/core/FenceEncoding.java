package dev.fenceguard.core;

/**
 * How a resource stores its fence: as a number, or as the 15-digit text form of
 * {@link FenceToken#toString()} (which sorts like the number).
 *
 * @since 0.1
 */
public enum FenceEncoding {
    /** A 64-bit integer: {@code BIGINT} in SQL, an integer field in Firestore. The default. */
    INTEGER,
    /** The zero-padded 15-character text form: {@code CHAR(15)} in SQL, a string field in Firestore. */
    TEXT
}
