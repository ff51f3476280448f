package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.IdempotencyKey.Profile;
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
                Arbitraries.strings().all().ofMinLength(1).ofMaxLength(300),
                Arbitraries.of(".", "..", "a.b", "a_b", "a b", "ü", "order-123", "x".repeat(250)));
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
    void badInputIsRefused() {
        assertThatThrownBy(() -> IdempotencyKey.builder(Profile.STRIPE).scope("").build()).hasMessage("scope must not be empty");
        assertThatThrownBy(() -> IdempotencyKey.builder(Profile.STRIPE).scope("a").id("b").build())
                .hasMessage("an idempotency key needs scope, id and operation; missing operation");
        assertThatThrownBy(() -> IdempotencyKey.builder(Profile.STRIPE).attempt(0)).hasMessage("attempt must be at least 1, was 0");
        assertThatThrownBy(() -> Profile.custom("tiny", 10, "abc", 'a')).hasMessageStartingWith("maxLength must be at least 32");
        assertThatThrownBy(() -> Profile.custom("nohex", 40, "xyz-", '-')).hasMessageContaining("hex digits");
    }
}
