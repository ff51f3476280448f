package dev.fenceguard.core.internal;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A short, non-reversible tag for a value that must not appear as it is: a lock id in a log line, a
 * lock key in a trace (keys are unbounded and may name a customer). 32 bits tell values apart in one
 * trace or log; they are no identity.
 */
public final class ShortHash {

    private ShortHash() {}

    /** 8 hex digits of the SHA-256 of {@code bytes}. */
    public static String of(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes), 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }
}
