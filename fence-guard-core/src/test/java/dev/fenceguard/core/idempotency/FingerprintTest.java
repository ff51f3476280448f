package dev.fenceguard.core.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class FingerprintTest {

    @Test
    void partsThatDifferOnlyInAnUnpairedSurrogateCannotShareAFingerprint() {
        // UTF-8 encoding writes '?' for a lone surrogate: two different requests would have looked the same.
        assertThatThrownBy(() -> Fingerprint.ofParts("charge", "order-\uD83D")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("fingerprint part 1 must be valid Unicode, found an unpaired surrogate U+D83D at index 6");
        assertThatThrownBy(() -> Fingerprint.ofParts("\uDE00")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("fingerprint part 0 must be valid Unicode, found an unpaired surrogate U+DE00 at index 0");
        assertThat(Fingerprint.ofParts("charge", "order-\uD83D\uDE00")).isNotEqualTo(Fingerprint.ofParts("charge", "order-?"));
    }

    @Test
    void partsAreLengthPrefixed() {
        assertThat(Fingerprint.ofParts("ab", "c")).isNotEqualTo(Fingerprint.ofParts("a", "bc"));
    }
}
