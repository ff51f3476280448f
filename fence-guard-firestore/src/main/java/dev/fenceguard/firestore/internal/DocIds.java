package dev.fenceguard.firestore.internal;

import dev.fenceguard.core.LockKey;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Document ids for lock keys. Firestore ids must not contain {@code /}, must not be {@code .} or
 * {@code ..}, must not match {@code __.*__}, and must fit in 1,500 bytes.
 *
 * <p>{@code "k" + escape(key)}, where escape replaces {@code %} by {@code %25} and {@code /} by
 * {@code %2F}: injective, readable, never {@code .}/{@code ..}, never starting with {@code __}. When
 * that would exceed 1,500 bytes (only for long keys full of {@code /} or {@code %}), the id is
 * {@code "h" + SHA-256(key)} in hex; the two forms cannot meet because they start differently.
 */
public final class DocIds {

    static final int MAX_BYTES = 1500;

    private DocIds() {}

    public static String of(LockKey key) {
        String value = key.value();
        StringBuilder out = new StringBuilder(value.length() + 1).append('k');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '%' -> out.append("%25");
                case '/' -> out.append("%2F");
                default -> out.append(c);
            }
        }
        String id = out.toString();
        if (id.getBytes(StandardCharsets.UTF_8).length <= MAX_BYTES) {
            return id;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
            return "h" + HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }
}
