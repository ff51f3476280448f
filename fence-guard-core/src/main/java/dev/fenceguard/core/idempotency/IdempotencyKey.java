package dev.fenceguard.core.idempotency;

import dev.fenceguard.core.internal.Text;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * Deterministic idempotency keys for payment APIs, naming the <em>business operation</em>: a scope,
 * an id, an operation and optionally an attempt number, e.g. {@code shop.order-123.charge}.
 *
 * <p><b>Never put the fence (or the lease, or anything per-process) into the key.</b> A zombie and
 * the holder that replaced it perform the same business operation; if each sent its own fence in the
 * key, the gateway would see two different operations and charge the card twice. With the same key
 * the gateway deduplicates, whichever of them gets there first. The fence guards <em>your</em>
 * resources; the idempotency key guards the provider's.
 *
 * <pre>{@code
 * String key = IdempotencyKey.builder(IdempotencyKey.Profile.STRIPE)
 *         .scope("shop").id(orderId).operation("charge").build();
 * HttpRequest charge = HttpRequest.newBuilder(URI.create("https://api.stripe.com/v1/charges"))
 *         .header("Idempotency-Key", key)                 // the same key on every retry, from any process
 *         .POST(HttpRequest.BodyPublishers.ofString(form)).build();
 * }</pre>
 *
 * <p>Keys stay within the profile's length limit and alphabet. When the plain form would not fit, or
 * a component contains characters outside the alphabet (or the separator), the key keeps a readable
 * prefix and ends in a hash of the exact components, so distinct operations still get distinct keys.
 *
 * <p>The two forms never meet. A hashed key always ends in the separator and exactly
 * {@code min(24, maxLength / 2)} lowercase hex digits (24 for Stripe and Adyen, 22 for Square, 20 for
 * Worldline); a plain key never does, because a key whose last component (the operation, or the
 * attempt number) is exactly that many lowercase hex digits is always hashed. So an operation that
 * spells another one's hash cannot borrow its key. <b>Compatibility:</b> earlier 0.1 snapshots rendered
 * such keys plain; they are now hashed, so an operation of that shape that was started with an earlier
 * build and is retried with this one gets a new key. Every other key is unchanged.
 *
 * <p>Components may be any non-empty, well-formed text. One holding an unpaired surrogate (a
 * {@code char} sequence that is no Unicode text, and that UTF-8 would turn into {@code '?'}) is
 * refused with an {@link IllegalArgumentException} naming the component, so that two different
 * components can never meet in one key.
 *
 * <p>Attempt numbers are for operations you <em>mean</em> to repeat (a new charge after a refund),
 * never for retries.
 *
 * @since 0.1
 */
public final class IdempotencyKey {

    /** A provider's documented maximum length, with a conservative alphabet and separator. */
    public record Profile(String name, int maxLength, String alphabet, char separator) {

        private static final String HEX = "0123456789abcdef";
        private static final String SAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.";

        /** Stripe: up to 255 characters. */
        public static final Profile STRIPE = new Profile("stripe", 255, SAFE, '.');
        /** Adyen: up to 64 characters. */
        public static final Profile ADYEN = new Profile("adyen", 64, SAFE, '.');
        /** Square: up to 45 characters. */
        public static final Profile SQUARE = new Profile("square", 45, SAFE, '.');
        /** Worldline: up to 40 characters. */
        public static final Profile WORLDLINE = new Profile("worldline", 40, SAFE, '.');

        /**
         * @throws IllegalArgumentException if {@code maxLength < 32} (too short to hold a prefix and a
         *     collision-resistant hash), the alphabet lacks the separator or any hex digit, or has
         *     characters outside printable ASCII, or the separator is a lowercase hex digit (it would
         *     blur where the hash of a hashed key starts)
         */
        public Profile {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(alphabet, "alphabet");
            if (maxLength < 32) {
                throw new IllegalArgumentException("maxLength must be at least 32 to fit a prefix and a hash, was " + maxLength);
            }
            if (HEX.indexOf(separator) >= 0) {
                throw new IllegalArgumentException("the separator must not be a lowercase hex digit, was '" + separator + "'");
            }
            if (alphabet.indexOf(separator) < 0) {
                throw new IllegalArgumentException("the alphabet must contain the separator '" + separator + "'");
            }
            for (char c : HEX.toCharArray()) {
                if (alphabet.indexOf(c) < 0) {
                    throw new IllegalArgumentException("the alphabet must contain the hex digits (for the hash), missing '" + c + "'");
                }
            }
            for (int i = 0; i < alphabet.length(); i++) {
                char c = alphabet.charAt(i);
                if (c < 0x21 || c > 0x7e) {
                    throw new IllegalArgumentException(String.format("the alphabet must be printable ASCII, found U+%04X", (int) c));
                }
            }
        }

        /** A custom profile: the provider's limit and the characters it accepts. */
        public static Profile custom(String name, int maxLength, String alphabet, char separator) {
            return new Profile(name, maxLength, alphabet, separator);
        }

        boolean allows(char c) {
            return alphabet.indexOf(c) >= 0;
        }
    }

    /**
     * Hex digits of SHA-256 kept in a hashed key: half the limit, at most 24 (96 bits); 16 (64 bits)
     * at the smallest allowed limit, 20 (80 bits) for Worldline's 40.
     */
    static int hashChars(Profile p) {
        return Math.min(24, p.maxLength() / 2);
    }

    private IdempotencyKey() {}

    /** A builder for keys of {@code profile}. Not thread-safe. */
    public static Builder builder(Profile profile) {
        return new Builder(Objects.requireNonNull(profile, "profile"));
    }

    /** Options of one key. */
    public static final class Builder {
        private final Profile profile;
        private String scope;
        private String id;
        private String operation;
        private OptionalInt attempt = OptionalInt.empty();

        private Builder(Profile profile) {
            this.profile = profile;
        }

        /**
         * What kind of thing the id names, e.g. {@code shop} or {@code orders}.
         *
         * @throws IllegalArgumentException if {@code scope} is empty or is not valid Unicode (holds an
         *     unpaired surrogate, which has no UTF-8 form)
         */
        public Builder scope(String scope) {
            this.scope = component("scope", scope);
            return this;
        }

        /**
         * The business id, e.g. an order number.
         *
         * @throws IllegalArgumentException if {@code id} is empty or is not valid Unicode
         */
        public Builder id(String id) {
            this.id = component("id", id);
            return this;
        }

        /**
         * The operation on it, e.g. {@code charge} or {@code refund}.
         *
         * @throws IllegalArgumentException if {@code operation} is empty or is not valid Unicode
         */
        public Builder operation(String operation) {
            this.operation = component("operation", operation);
            return this;
        }

        /**
         * For operations performed more than once on purpose (a second charge after a refund); never a
         * retry counter.
         *
         * @throws IllegalArgumentException if {@code attempt < 1}
         */
        public Builder attempt(int attempt) {
            if (attempt < 1) {
                throw new IllegalArgumentException("attempt must be at least 1, was " + attempt);
            }
            this.attempt = OptionalInt.of(attempt);
            return this;
        }

        /**
         * The key.
         *
         * @throws IllegalStateException if scope, id or operation is missing
         */
        public String build() {
            if (scope == null || id == null || operation == null) {
                throw new IllegalStateException("an idempotency key needs scope, id and operation; missing "
                        + (scope == null ? "scope" : id == null ? "id" : "operation"));
            }
            List<String> parts = new ArrayList<>(List.of(scope, id, operation));
            attempt.ifPresent(a -> parts.add(Integer.toString(a)));
            return render(profile, parts);
        }

        private static String component(String what, String value) {
            Objects.requireNonNull(value, what);
            if (value.isEmpty()) {
                throw new IllegalArgumentException(what + " must not be empty");
            }
            // UTF-8 has no form for a lone surrogate: the hash would see '?' in its place, and "\uD83D",
            // "\uDE00" and "?" would name one key. The message names the component, not its value.
            Text.requireValidUnicode(what, value);
            return value;
        }
    }

    static String render(Profile p, List<String> parts) {
        StringBuilder readable = new StringBuilder();
        boolean lossless = true;
        for (int i = 0; i < parts.size(); i++) {
            if (i > 0) {
                readable.append(p.separator());
            }
            String part = parts.get(i);
            for (int j = 0; j < part.length(); j++) {
                char c = part.charAt(j);
                if (c != p.separator() && p.allows(c)) {
                    readable.append(c);
                } else {
                    readable.append(p.allows('_') && p.separator() != '_' ? '_' : '0');
                    lossless = false;
                }
            }
        }
        int hashChars = hashChars(p);
        if (lossless && readable.length() <= p.maxLength() && !looksHashed(parts.getLast(), hashChars)) {
            return readable.toString();
        }
        String hash = hash(parts).substring(0, hashChars);
        int prefix = p.maxLength() - hash.length() - 1;
        String head = readable.length() > prefix ? readable.substring(0, prefix) : readable.toString();
        return head + p.separator() + hash;
    }

    /**
     * Whether a last component reads like the hash that ends a hashed key: plain keys must not, so
     * that the two forms are disjoint by construction.
     */
    private static boolean looksHashed(String last, int hashChars) {
        if (last.length() != hashChars) {
            return false;
        }
        for (int i = 0; i < last.length(); i++) {
            char c = last.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }

    /** SHA-256 of the parts, each length-prefixed so the encoding is unambiguous. */
    private static String hash(List<String> parts) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            for (String part : parts) {
                byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
                sha.update((bytes.length + ":").getBytes(StandardCharsets.US_ASCII));
                sha.update(bytes);
            }
            return HexFormat.of().formatHex(sha.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }
}
