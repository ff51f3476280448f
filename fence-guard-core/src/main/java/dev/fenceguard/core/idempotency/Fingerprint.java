package dev.fenceguard.core.idempotency;

import dev.fenceguard.core.internal.Text;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

/**
 * What a request said, reduced to a short digest: a retry under the same idempotency key must carry
 * the same fingerprint, or it is refused as a conflict (the key would otherwise name two different
 * operations, and the second would silently get the first one's result).
 *
 * <pre>{@code
 * Fingerprint fp = Fingerprint.ofParts("charge", orderId, Long.toString(amountCents), currency);
 * }</pre>
 *
 * @param hex the digest in lowercase hex, 1 to 128 characters
 * @since 0.1
 */
public record Fingerprint(String hex) {

    /** Longest fingerprint accepted, in hex characters (a SHA-512 digest). */
    public static final int MAX_HEX_LENGTH = 128;

    /**
     * @throws IllegalArgumentException if {@code hex} is empty, longer than 128 characters or holds
     *     anything but lowercase hex digits
     */
    public Fingerprint {
        Objects.requireNonNull(hex, "hex");
        if (hex.isEmpty() || hex.length() > MAX_HEX_LENGTH) {
            throw new IllegalArgumentException("fingerprint must be 1 to " + MAX_HEX_LENGTH + " lowercase hex characters, was "
                    + hex.length() + " characters");
        }
        for (int i = 0; i < hex.length(); i++) {
            char c = hex.charAt(i);
            if (!(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'f')) {
                throw new IllegalArgumentException("fingerprint must be lowercase hex, found '" + c + "' at index " + i);
            }
        }
    }

    /** The SHA-256 of {@code request} (e.g. the request body as sent). */
    public static Fingerprint of(byte[] request) {
        return new Fingerprint(HexFormat.of().formatHex(sha256().digest(Objects.requireNonNull(request, "request"))));
    }

    /**
     * The SHA-256 of {@code parts}, each length-prefixed so that {@code ("ab", "c")} and
     * {@code ("a", "bc")} differ.
     *
     * @throws NullPointerException if {@code parts} or one of them is null
     * @throws IllegalArgumentException if a part is not valid Unicode (holds an unpaired surrogate, which
     *     UTF-8 would turn into {@code '?'}, so that two different requests would look the same); the
     *     message names the part's index
     */
    public static Fingerprint ofParts(String... parts) {
        MessageDigest digest = sha256();
        Objects.requireNonNull(parts, "parts");
        for (int i = 0; i < parts.length; i++) {
            Text.requireValidUnicode("fingerprint part " + i, Objects.requireNonNull(parts[i], "part"));
        }
        for (String part : parts) {
            byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
            digest.update(Integer.toString(bytes.length).getBytes(StandardCharsets.US_ASCII));
            digest.update((byte) ':');
            digest.update(bytes);
        }
        return new Fingerprint(HexFormat.of().formatHex(digest.digest()));
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }

    @Override
    public String toString() {
        return hex.length() <= 16 ? hex : hex.substring(0, 16) + "...";
    }
}
