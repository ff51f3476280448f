package dev.fenceguard.core;

import dev.fenceguard.core.internal.ShortHash;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The identity of one acquisition: 128 random bits from {@link SecureRandom}, as 22 base64url
 * characters.
 *
 * <p>A lock id is a bearer secret: whoever knows it can release or extend the lock. {@link #toString()}
 * therefore shows only a short hash ({@code #1a2b3c4d}); fence-guard never logs the full value.
 *
 * @since 0.1
 */
public final class LockId {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Pattern FORMAT = Pattern.compile("[A-Za-z0-9_-]{22}");

    private final String value;

    private LockId(String value) {
        this.value = value;
    }

    /** A fresh random lock id. */
    public static LockId random() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return new LockId(Base64.getUrlEncoder().withoutPadding().encodeToString(bytes));
    }

    /**
     * Reads a lock id back from its 22-character base64url form (for backends that store it).
     *
     * @throws IllegalArgumentException if {@code value} is not 22 base64url characters
     */
    public static LockId of(String value) {
        Objects.requireNonNull(value, "lock id");
        if (!FORMAT.matcher(value).matches()) {
            throw new IllegalArgumentException("lock id must be 22 base64url characters, was "
                    + value.length() + " characters");
        }
        return new LockId(value);
    }

    /** The full secret value. Store it; do not log it. */
    public String value() {
        return value;
    }

    /** A short, non-reversible tag for logs: {@code #} and 8 hex digits of the SHA-256 of the id. */
    public String redacted() {
        return "#" + ShortHash.of(value.getBytes(StandardCharsets.US_ASCII));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LockId other && MessageDigest.isEqual(
                value.getBytes(StandardCharsets.US_ASCII), other.value.getBytes(StandardCharsets.US_ASCII));
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    /** The redacted form; see {@link #redacted()}. */
    @Override
    public String toString() {
        return redacted();
    }
}
