package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class LockKeyTest {

    @Test
    void emptyKeyIsRejected() {
        assertThatThrownBy(() -> LockKey.of("")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lock key must not be empty");
    }

    @Test
    void keyOf512Utf8BytesIsAcceptedAnd513IsRejected() {
        assertThat(LockKey.of("a".repeat(512)).utf8()).hasSize(512);
        assertThatThrownBy(() -> LockKey.of("a".repeat(513))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("lock key must be at most 512 UTF-8 bytes, was 513");
        // 170 three-byte characters = 510 bytes, plus "ab" = 512; plus "abc" = 513.
        String threeByte = "€".repeat(170);
        assertThat(LockKey.of(threeByte + "ab").utf8()).hasSize(512);
        assertThatThrownBy(() -> LockKey.of(threeByte + "abc")).hasMessageContaining("was 513");
    }

    @Test
    void nfcAndNfdSpellingsNameTheSameLock() {
        String nfc = "caf\u00e9:1";
        String nfd = "cafe\u0301:1";
        assertThat(nfc).isNotEqualTo(nfd);
        assertThat(LockKey.of(nfd)).isEqualTo(LockKey.of(nfc));
        assertThat(LockKey.of(nfd).value()).isEqualTo(nfc);
        assertThatThrownBy(() -> new LockKey(nfd)).hasMessageContaining("NFC");
    }

    @Test
    void lengthIsMeasuredAfterNormalisation() {
        // U+0344 (COMBINING GREEK DIALYTIKA TONOS, 2 bytes) decomposes under NFC to U+0308 U+0301 (4 bytes).
        String grows = "\u0344".repeat(129);
        assertThat(grows.getBytes(StandardCharsets.UTF_8)).hasSize(258);
        assertThatThrownBy(() -> LockKey.of(grows)).hasMessageContaining("was 516");
    }

    @Test
    void nulIsRejectedWithItsPosition() {
        assertThatThrownBy(() -> LockKey.of("orders\u00004")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lock key must not contain NUL (U+0000), found at index 6: 'orders\\u00004'");
    }

    @Test
    void unpairedSurrogatesAreRejected() {
        assertThatThrownBy(() -> LockKey.of("a\uD800b")).hasMessageContaining("unpaired surrogate U+D800 at index 1");
        assertThatThrownBy(() -> LockKey.of("a\uDC00")).hasMessageContaining("unpaired surrogate U+DC00 at index 1");
        assertThatThrownBy(() -> LockKey.of("\uD800")).hasMessageContaining("unpaired surrogate");
        assertThat(LockKey.of("emoji \uD83D\uDD12").utf8()).hasSize(10);
    }

    @Test
    void nullIsRejected() {
        assertThatThrownBy(() -> LockKey.of(null)).isInstanceOf(NullPointerException.class).hasMessage("lock key");
    }

    @Test
    void keysSortByCodePointNotUtf16() {
        // U+FF61 sorts before U+1F512 by code point, but after it in UTF-16 (0xFF61 > 0xD83D).
        LockKey bmp = LockKey.of("\uFF61");
        LockKey astral = LockKey.of("\uD83D\uDD12");
        assertThat(bmp.compareTo(astral)).isNegative();
        assertThat(LockKey.of("a").compareTo(LockKey.of("ab"))).isNegative();
    }

    @Test
    void lockIdsAreRandomBase64UrlAndRedacted() {
        LockId id = LockId.random();
        assertThat(id.value()).matches("[A-Za-z0-9_-]{22}");
        assertThat(id.toString()).matches("#[0-9a-f]{8}").doesNotContain(id.value());
        assertThat(LockId.of(id.value())).isEqualTo(id);
        assertThat(LockId.random()).isNotEqualTo(id);
        assertThatThrownBy(() -> LockId.of("short")).hasMessage("lock id must be 22 base64url characters, was 5 characters");
    }
}
