package dev.fenceguard.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.CapturedLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WriteRuleTest {

    private final List<String> counted = new ArrayList<>();
    /** Thrown by the metrics on a rejection when set: a broken meter registry. */
    private RuntimeException failure;
    private final LockMetrics metrics = new LockMetrics() {
        @Override
        public void acquireAttempt(String backend, AcquireOutcome outcome, Duration latency) {}

        @Override
        public void held(String backend, Duration holdTime) {}

        @Override
        public void renewFailed(String backend) {}

        @Override
        public void highFence(String backend) {}

        @Override
        public void staleWriteRejected(String resourceType) {
            if (failure != null) {
                throw failure;
            }
            counted.add(resourceType);
        }
    };

    @Test
    void storedFencesDecodeTheSameWhicheverFormTheyHave() {
        assertThat(WriteRule.decode(null)).isZero();
        assertThat(WriteRule.decode(42L)).isEqualTo(42);
        assertThat(WriteRule.decode(42)).isEqualTo(42);
        assertThat(WriteRule.decode("000000000000042")).isEqualTo(42);
        assertThat(WriteRule.decode("000000000000042  ")).as("CHAR(15) padding is ignored").isEqualTo(42);
        assertThat(WriteRule.decode("000000000000000")).isZero();
        assertThatThrownBy(() -> WriteRule.decode("forty-two")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("the stored fence is not a fence: 'forty-two'");
    }

    @Test
    void encodingRoundTripsAndZeroSortsFirst() {
        WriteRule text = new WriteRule(FencePolicy.SAME_OR_NEWER, FenceEncoding.TEXT, metrics, "t");
        WriteRule number = new WriteRule(FencePolicy.SAME_OR_NEWER, FenceEncoding.INTEGER, metrics, "t");
        FenceToken f = FenceToken.of(7);
        assertThat(text.encode(f)).isEqualTo("000000000000007");
        assertThat(number.encode(f)).isEqualTo(7L);
        assertThat(WriteRule.decode(text.encode(f))).isEqualTo(7);
        assertThat(((String) text.zero()).compareTo((String) text.encode(FenceToken.of(1)))).isNegative();
        assertThat(number.zero()).isEqualTo(0L);
    }

    @Test
    void aRejectionIsCountedOnceUnderTheResourceType() {
        WriteRule rule = new WriteRule(FencePolicy.STRICTLY_NEWER, FenceEncoding.INTEGER, metrics, "redis");
        assertThat(rule.admits(FenceToken.of(5), 5)).isFalse();
        assertThat(rule.admits(FenceToken.of(6), 5)).isTrue();
        var stale = rule.stale("orders:1", FenceToken.of(5), 5);
        assertThat(stale.currentFence()).isEqualTo(5);
        assertThat(stale.presentedFence()).isEqualTo(5);
        assertThat(counted).containsExactly("redis");
    }

    @Test
    void aMetricsSinkThatThrowsIsLoggedAndNeverFailsTheWrite() {
        failure = new IllegalStateException("meter registry broken");
        WriteRule rule = new WriteRule(FencePolicy.SAME_OR_NEWER, FenceEncoding.INTEGER, metrics, "redis");
        WriteOutcome.Stale[] stale = new WriteOutcome.Stale[1];
        String log = CapturedLog.of(() -> stale[0] = rule.stale("orders:1", FenceToken.of(4), 5));
        assertThat(stale[0].currentFence()).isEqualTo(5);
        assertThat(log).contains("LockMetrics of the fenced writes threw on StaleWrite; ignored", "meter registry broken");
    }

    @Test
    void keysAreCheckedBeforeAnyIo() {
        assertThatThrownBy(() -> WriteRule.checkKey("key", "")).hasMessage("key must not be empty");
        assertThatThrownBy(() -> WriteRule.checkKey("key", "a\uD800")).isInstanceOf(IllegalArgumentException.class);
        assertThat(WriteRule.checkKey("key", "a\0b")).as("Redis keys may hold NUL").isEqualTo("a\0b");
        assertThatThrownBy(() -> WriteRule.checkTextKey("key", "a\0b")).hasMessageContaining("NUL");
    }
}
