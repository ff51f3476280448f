package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.StringLength;

class FenceTokenProperties {

    @Property
    void textOrderIsNumericOrder(@ForAll @LongRange(min = 1, max = FenceToken.MAX_VALUE) long a,
            @ForAll @LongRange(min = 1, max = FenceToken.MAX_VALUE) long b) {
        int byText = Integer.signum(FenceToken.of(a).toString().compareTo(FenceToken.of(b).toString()));
        assertThat(byText).isEqualTo(Long.signum(Long.compare(a, b)));
        assertThat(Integer.signum(FenceToken.of(a).compareTo(FenceToken.of(b)))).isEqualTo(byText);
    }

    @Property
    void formatThenParseRoundTrips(@ForAll @LongRange(min = 1, max = FenceToken.MAX_VALUE) long value) {
        String text = FenceToken.of(value).toString();
        assertThat(text).hasSize(15).containsOnlyDigits();
        assertThat(FenceToken.parse(text).value()).isEqualTo(value);
    }

    @Property
    void parseRejectsAnythingButFifteenDigits(@ForAll("notFifteenDigits") String text) {
        assertThatThrownBy(() -> FenceToken.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fence token");
    }

    @Provide
    Arbitrary<String> notFifteenDigits() {
        Arbitrary<String> wrongLength = Arbitraries.strings().numeric().ofMinLength(0).ofMaxLength(30)
                .filter(s -> s.length() != 15);
        Arbitrary<String> oneBadChar = Arbitraries.strings().numeric().ofLength(14)
                .flatMap(digits -> Arbitraries.of('+', '-', ' ', 'a', '٣', '\0', '.', 'e', '\uD800')
                        .flatMap(bad -> Arbitraries.integers().between(0, 14)
                                .map(at -> digits.substring(0, at) + bad + digits.substring(at))));
        return Arbitraries.oneOf(wrongLength, oneBadChar);
    }

    @Property
    void parseRejectsFifteenDigitsOutOfRange(@ForAll @StringLength(1) @net.jqwik.api.constraints.NumericChars String lead) {
        // 9xxxxxxxxxxxxxx with any non-zero tail is above 9e14; all zeros is below 1.
        assertThatThrownBy(() -> FenceToken.parse("9" + "0".repeat(13) + (lead.equals("0") ? "1" : lead)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("between 1 and 900000000000000");
        assertThatThrownBy(() -> FenceToken.parse("000000000000000")).isInstanceOf(IllegalArgumentException.class);
    }

    @Example
    void boundariesAndTextForm() {
        assertThat(FenceToken.of(42).toString()).isEqualTo("000000000000042");
        assertThat(FenceToken.parse("900000000000000").value()).isEqualTo(FenceToken.MAX_VALUE);
        assertThat(FenceToken.of(FenceToken.WARN_THRESHOLD).isNearExhaustion()).isFalse();
        assertThat(FenceToken.of(FenceToken.WARN_THRESHOLD + 1).isNearExhaustion()).isTrue();
        assertThatThrownBy(() -> FenceToken.of(0)).hasMessage("fence token must be between 1 and 900000000000000, was 0");
        assertThatThrownBy(() -> FenceToken.of(FenceToken.MAX_VALUE + 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FenceToken.parse(" 00000000000042")).hasMessageContaining("U+0020 at index 0");
    }
}
