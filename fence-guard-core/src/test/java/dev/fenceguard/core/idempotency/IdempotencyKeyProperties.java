package dev.fenceguard.core.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.idempotency.IdempotencyKey.Profile;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

class IdempotencyKeyProperties {

    @Provide
    Arbitrary<Profile> profiles() {
        return Arbitraries.of(Profile.STRIPE, Profile.ADYEN, Profile.SQUARE, Profile.WORLDLINE,
                Profile.custom("digits-and-hex", 32, "0123456789abcdef-", '-'));
    }

    @Provide
    Arbitrary<String> components() {
        return Arbitraries.oneOf(
                Arbitraries.strings().alpha().numeric().ofMinLength(1).ofMaxLength(12),
                wellFormed(300),
                Arbitraries.of(".", "..", "a.b", "a_b", "a b", "ü", "order-123", "x".repeat(250), "?", "\uD83D\uDE00"));
    }

    /** Any well-formed UTF-16 text: every char of the BMP but surrogates, and supplementary code points as pairs. */
    private static Arbitrary<String> wellFormed(int maxCodePoints) {
        Arbitrary<String> bmp = Arbitraries.chars().range('\u0001', '\uD7FF').map(String::valueOf);
        Arbitrary<String> upperBmp = Arbitraries.chars().range('\uE000', '\uFFFF').map(String::valueOf);
        Arbitrary<String> supplementary = Arbitraries.integers().between(0x10000, Character.MAX_CODE_POINT).map(Character::toString);
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(6, bmp), net.jqwik.api.Tuple.of(1, upperBmp),
                        net.jqwik.api.Tuple.of(1, supplementary))
                .list().ofMinSize(1).ofMaxSize(maxCodePoints).map(cps -> String.join("", cps));
    }

    /**
     * A well-formed component with one lone surrogate inserted anywhere (a pair cannot absorb it: the
     * counts of high and low surrogates then differ). UTF-8 cannot encode it; Java's encoder would
     * write '?' in its place, so these once gave the key of the same text with '?' instead.
     */
    @Provide
    Arbitrary<String> malformed() {
        return net.jqwik.api.Combinators.combine(wellFormed(40), Arbitraries.integers().between(0, 1000),
                Arbitraries.oneOf(Arbitraries.chars().range('\uD800', '\uDBFF'), Arbitraries.chars().range('\uDC00', '\uDFFF')))
                .as((s, at, lone) -> {
                    int i = at % (s.length() + 1);
                    return s.substring(0, i) + lone + s.substring(i);
                });
    }

    @Provide
    Arbitrary<String> componentNames() {
        return Arbitraries.of("scope", "id", "operation");
    }

    @Property(tries = 1000)
    void aComponentWithAnUnpairedSurrogateIsRefusedByNameBeforeAKeyIsBuilt(@ForAll("profiles") Profile p,
            @ForAll("componentNames") String which, @ForAll("malformed") String bad) {
        IdempotencyKey.Builder b = IdempotencyKey.builder(p).scope("shop").id("order-1").operation("charge");
        assertThatThrownBy(() -> {
            switch (which) {
                case "scope" -> b.scope(bad);
                case "id" -> b.id(bad);
                default -> b.operation(bad);
            }
        }).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(which + " must be valid Unicode, found an unpaired surrogate")
                .hasMessageNotContaining(bad);
        assertThat(b.build()).as("the builder keeps its valid components").isEqualTo(key(p, "shop", "order-1", "charge"));
    }

    private static String key(Profile p, String scope, String id, String op) {
        return IdempotencyKey.builder(p).scope(scope).id(id).operation(op).build();
    }

    @Property(tries = 2000)
    void lengthAndAlphabetStayWithinTheProfile(@ForAll("profiles") Profile p, @ForAll("components") String scope,
            @ForAll("components") String id, @ForAll("components") String op) {
        String key = key(p, scope, id, op);
        assertThat(key.length()).isBetween(1, p.maxLength());
        assertThat(key.chars().allMatch(c -> p.alphabet().indexOf(c) >= 0)).as("alphabet of %s", key).isTrue();
    }

    @Property(tries = 500)
    void theSameOperationAlwaysGetsTheSameKey(@ForAll("profiles") Profile p, @ForAll("components") String scope,
            @ForAll("components") String id, @ForAll("components") String op) {
        assertThat(key(p, scope, id, op)).isEqualTo(key(p, scope, id, op));
    }

    @Property(tries = 2000)
    void distinctOperationsGetDistinctKeysEvenAtTheLimit(@ForAll("profiles") Profile p, @ForAll("components") String id1,
            @ForAll("components") String id2, @ForAll("components") String op) {
        net.jqwik.api.Assume.that(!id1.equals(id2));
        assertThat(key(p, "shop", id1, op)).isNotEqualTo(key(p, "shop", id2, op));
    }

    @Provide
    Arbitrary<String> shortScopes() {
        return Arbitraries.strings().withChars("0123456789abcdef").ofMinLength(1).ofMaxLength(8);
    }

    @Provide
    Arbitrary<String> longIds() {
        // Longer than every limit, in every profile's alphabet: the key is hashed, its prefix cut inside the id.
        return Arbitraries.strings().withChars("0123456789abcdef").ofMinLength(256).ofMaxLength(300);
    }

    @Property(tries = 2000)
    void aPlainKeyNeverSpellsAnotherOperationsHashedKey(@ForAll("profiles") Profile p, @ForAll("shortScopes") String scope,
            @ForAll("longIds") String id, @ForAll("components") String op) {
        String hashed = key(p, scope, id, op);
        // The adversary spells the hashed key as three components: scope, the id's prefix, and the hash as operation.
        String[] segments = hashed.split(java.util.regex.Pattern.quote(String.valueOf(p.separator())), -1);
        assertThat(segments).as("hashed key %s", hashed).hasSize(3);
        assertThat(segments[2]).hasSize(IdempotencyKey.hashChars(p));
        String adversary = key(p, segments[0], segments[1], segments[2]);
        assertThat(adversary).as("(%s, %s, %s) against the hashed key of a distinct operation", segments[0], segments[1],
                segments[2]).isNotEqualTo(hashed);
        assertThat(adversary.length()).isLessThanOrEqualTo(p.maxLength());
    }

    @Example
    void anOperationThatLooksLikeAHashIsHashedAndOtherKeysKeepTheirFormat() {
        String hexOp = "0123456789abcdef01234567"; // 24 hex digits: the length of a Stripe key's hash
        String key = key(Profile.STRIPE, "shop", "order-1", hexOp);
        assertThat(key).isNotEqualTo("shop.order-1." + hexOp).matches("shop\\.order-1\\.0123456789abcdef01234567\\.[0-9a-f]{24}");
        // One digit shorter or longer, or upper case, cannot be a hash: the key stays plain, as before.
        assertThat(key(Profile.STRIPE, "shop", "order-1", hexOp.substring(1))).isEqualTo("shop.order-1." + hexOp.substring(1));
        assertThat(key(Profile.STRIPE, "shop", "order-1", hexOp + "8")).isEqualTo("shop.order-1." + hexOp + "8");
        assertThat(key(Profile.STRIPE, "shop", "order-1", hexOp.toUpperCase())).isEqualTo("shop.order-1." + hexOp.toUpperCase());
        // Square's hash is 22 digits: there the 24-digit operation is plain, a 22-digit one is hashed.
        assertThat(key(Profile.SQUARE, "s", "1", hexOp)).isEqualTo("s.1." + hexOp);
        assertThat(key(Profile.SQUARE, "s", "1", hexOp.substring(2))).hasSize(45).matches("s\\.1\\.[0-9a-f]{18}\\.[0-9a-f]{22}");
    }

    @Example
    void nearlyEqualIdsThatSanitiseAlikeStayDistinct() {
        // "a b" and "a_b" both read as "a_b"; the hash of the exact components keeps them apart.
        assertThat(key(Profile.SQUARE, "s", "a b", "charge")).isNotEqualTo(key(Profile.SQUARE, "s", "a_b", "charge"));
        assertThat(key(Profile.SQUARE, "s", "a_b", "charge")).isEqualTo("s.a_b.charge");
        assertThat(key(Profile.SQUARE, "s.x", "y", "charge")).as("separator inside a component")
                .isNotEqualTo(key(Profile.SQUARE, "s", "x.y", "charge"));
    }

    @Example
    void shortKeysAreReadableAndLongOnesKeepAPrefix() {
        assertThat(key(Profile.STRIPE, "shop", "order-123", "charge")).isEqualTo("shop.order-123.charge");
        assertThat(IdempotencyKey.builder(Profile.STRIPE).scope("shop").id("order-123").operation("charge").attempt(2).build())
                .isEqualTo("shop.order-123.charge.2");
        String longKey = key(Profile.WORLDLINE, "shop", "order-1234567890-abcdefghijklmnop", "charge");
        assertThat(longKey).hasSize(40).startsWith("shop.order-12").matches(".*\\.[0-9a-f]{20}");
    }

    @Example
    void theFenceIsNotAnInputSoAZombieAndItsSuccessorSendTheSameKey() {
        // Both holders build the key from the business operation only: the gateway deduplicates.
        String zombie = key(Profile.ADYEN, "orders", "42", "charge");
        String successor = key(Profile.ADYEN, "orders", "42", "charge");
        assertThat(zombie).isEqualTo(successor);
    }

    @Example
    void textThatDiffersOnlyInAnUnpairedSurrogateCannotShareAKey() {
        // UTF-8 encoding turns each of the first two into "?": they all named one key in every profile.
        for (Profile p : new Profile[] {Profile.STRIPE, Profile.ADYEN, Profile.SQUARE, Profile.WORLDLINE}) {
            assertThatThrownBy(() -> key(p, "shop", "\uD83D", "charge")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("id must be valid Unicode, found an unpaired surrogate U+D83D at index 0");
            assertThatThrownBy(() -> key(p, "shop", "order-\uDE00", "charge")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("id must be valid Unicode, found an unpaired surrogate U+DE00 at index 6");
            assertThat(key(p, "shop", "\uD83D\uDE00", "charge")).as("a pair is fine").isNotEqualTo(key(p, "shop", "?", "charge"));
        }
    }

    @Example
    void badInputIsRefused() {
        assertThatThrownBy(() -> IdempotencyKey.builder(Profile.STRIPE).scope("").build()).hasMessage("scope must not be empty");
        assertThatThrownBy(() -> IdempotencyKey.builder(Profile.STRIPE).scope("a").id("b").build())
                .hasMessage("an idempotency key needs scope, id and operation; missing operation");
        assertThatThrownBy(() -> IdempotencyKey.builder(Profile.STRIPE).attempt(0)).hasMessage("attempt must be at least 1, was 0");
        assertThatThrownBy(() -> Profile.custom("tiny", 10, "abc", 'a')).hasMessageStartingWith("maxLength must be at least 32");
        assertThatThrownBy(() -> Profile.custom("nohex", 40, "xyz-", '-')).hasMessageContaining("hex digits");
        assertThatThrownBy(() -> Profile.custom("hexsep", 40, "0123456789abcdef", 'a'))
                .hasMessage("the separator must not be a lowercase hex digit, was 'a'");
    }
}
