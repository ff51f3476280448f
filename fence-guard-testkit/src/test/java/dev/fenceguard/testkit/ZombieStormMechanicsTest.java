package dev.fenceguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** How the storm counts, schedules faults, validates its settings and keeps its bound. */
class ZombieStormMechanicsTest {

    private static LockClient locks() {
        return LockClient.builder(new InMemoryLockBackend()).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(1), Duration.ofMillis(20)).build();
    }

    private static ZombieStorm.Builder storm(ZombieStorm.FencedCounter counter) {
        // Leases long enough that no lease runs out by accident: these tests count exactly, and with stalls
        // off nothing waits for a lease to end. (1 s was not enough: on a CI machine with both cores busy a
        // worker was descheduled past its lease, its claim was Stale, and 49 writes were counted, not 50.)
        return ZombieStorm.builder(locks(), "counter", counter).withTtl(Duration.ofSeconds(30));
    }

    /** A correct counter that fails its write with {@code error} every {@code every}-th call. */
    private static ZombieStorm.FencedCounter failingEvery(int every, RuntimeException error) {
        InMemoryZombieStormTest.Counter good = new InMemoryZombieStormTest.Counter(true);
        AtomicInteger calls = new AtomicInteger();
        return new ZombieStorm.FencedCounter() {
            @Override
            public WriteOutcome claim(FenceToken fence) {
                return good.claim(fence);
            }

            @Override
            public long read() {
                return good.read();
            }

            @Override
            public WriteOutcome write(long value, FenceToken fence) {
                if (calls.incrementAndGet() % every == 0) {
                    throw error;
                }
                return good.write(value, fence);
            }
        };
    }

    @Test
    void theSizeIsTheTotalNumberOfAttemptsAcrossWorkers() throws Exception {
        ZombieStorm.Result r = storm(new InMemoryZombieStormTest.Counter(true)).withWorkers(4).withAttempts(37)
                .withStallProbability(0).build().run();
        assertThat(r.attempts()).isEqualTo(37);
        assertThat(r.acquired()).isEqualTo(37);
        assertThat(r.applied()).isEqualTo(37);
        r.requireSafe();
    }

    @Test
    void mappedErrorsAreCountedByCodeAndLeaveTheStormSafe() throws Exception {
        ZombieStorm.Result r = storm(failingEvery(5, new FenceGuardException(ErrorCode.UNAVAILABLE, "counter", "down")))
                .withAttempts(50).withStallProbability(0).build().run();
        assertThat(r.errors()).containsEntry(ErrorCode.UNAVAILABLE, 10L);
        assertThat(r.errorCount()).isEqualTo(10);
        assertThat(r.firstErrors().get(ErrorCode.UNAVAILABLE)).hasMessageContaining("down");
        assertThat(r.summary()).contains("errors=10 [UNAVAILABLE=10]").contains("unmapped-errors=0");
        r.requireSafe();
    }

    @Test
    void anUnmappedErrorMakesTheStormUnsafeAndBecomesTheCause() throws Exception {
        IllegalStateException raw = new IllegalStateException("a raw driver exception leaked");
        ZombieStorm.Result r = storm(failingEvery(7, raw)).withAttempts(30).withStallProbability(0).build().run();
        assertThat(r.unmappedErrors()).isEqualTo(4);
        assertThat(r.firstUnmappedError()).containsSame(raw);
        assertThat(r.isSafe()).isFalse();
        assertThatThrownBy(r::requireSafe).isInstanceOf(AssertionError.class).hasMessageContaining("unmapped-errors=4")
                .hasCause(raw);
    }

    @Test
    void eachFaultRunsOnceAtItsAttempt() throws Exception {
        InMemoryZombieStormTest.Counter counter = new InMemoryZombieStormTest.Counter(true);
        AtomicInteger first = new AtomicInteger();
        AtomicInteger second = new AtomicInteger();
        ZombieStorm.Result r = storm(counter).withAttempts(40).withStallProbability(0)
                .withFault(10, first::incrementAndGet).withFault(40, second::incrementAndGet).withFault(10, first::incrementAndGet)
                .build().run();
        assertThat(first).hasValue(2);
        assertThat(second).hasValue(1);
        assertThat(r.faultsRun()).isEqualTo(3);
        assertThat(r.summary()).contains("faults=3/3");
        r.requireSafe();
    }

    @Test
    void aFaultThatThrowsIsReportedAsUnmapped() throws Exception {
        ZombieStorm.Result r = storm(new InMemoryZombieStormTest.Counter(true)).withAttempts(10).withStallProbability(0)
                .withFault(3, () -> {
                    throw new java.io.IOException("could not restart the server");
                }).build().run();
        assertThat(r.isSafe()).isFalse();
        assertThat(r.faultsRun()).isZero();
        assertThat(r.firstUnmappedError()).get().asString().contains("attempt 3").contains("could not restart the server");
    }

    @Test
    void aStormWhoseCallsHangStopsAtItsBoundAndSaysSo() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        ZombieStorm.FencedCounter hanging = new ZombieStorm.FencedCounter() {
            @Override
            public WriteOutcome claim(FenceToken fence) throws InterruptedException {
                never.await(); // a driver with no timeout
                throw new AssertionError("unreachable");
            }

            @Override
            public long read() {
                return 0;
            }

            @Override
            public WriteOutcome write(long value, FenceToken fence) {
                throw new AssertionError("unreachable");
            }
        };
        ZombieStorm storm = storm(hanging).withTtl(Duration.ofMillis(20)).withAttempts(4).withWorkers(2).withAcquireWait(Duration.ZERO)
                .withCallTimeout(Duration.ofMillis(20)).build();
        assertThat(storm.bound()).isEqualTo(Duration.ofMillis((0 + 2 * 20 + 4 * 20) * (2 + 1)));
        ZombieStorm.Result r = storm.run();
        assertThat(r.finished()).isFalse();
        assertThat(r.isSafe()).isFalse();
        assertThat(r.summary()).contains("DID NOT FINISH");
    }

    @Test
    void theDefaultStallProbabilityKeepsBigStormsShort() {
        assertThat(ZombieStorm.defaultStallProbability(90)).isEqualTo(0.25);
        assertThat(ZombieStorm.defaultStallProbability(800)).isEqualTo(0.25);
        assertThat(ZombieStorm.defaultStallProbability(10_000)).isEqualTo(0.02);
    }

    @Test
    void badSettingsAreRefusedWithTheSettingAndValue() {
        ZombieStorm.FencedCounter c = new InMemoryZombieStormTest.Counter(true);
        assertThatThrownBy(() -> storm(c).withAttempts(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("attempts must be at least 1, was 0");
        assertThatThrownBy(() -> storm(c).withWorkers(1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("was 1");
        assertThatThrownBy(() -> storm(c).withTtl(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("ttl must be between 1 ms and 1 minute, was PT0S");
        assertThatThrownBy(() -> storm(c).withAcquireWait(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("acquire wait");
        assertThatThrownBy(() -> storm(c).withCallTimeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("call timeout");
        assertThatThrownBy(() -> storm(c).withStallProbability(1.5)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("stall probability must be in [0, 1], was 1.5");
        assertThatThrownBy(() -> storm(c).withFault(0, () -> {})).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a fault's attempt number must be at least 1, was 0");
        assertThatThrownBy(() -> storm(c).withAttempts(100).withFault(101, () -> {}).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a fault is scheduled at attempt 101, beyond the storm's 100 attempts");
        assertThatThrownBy(() -> ZombieStorm.builder(locks(), "", c)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> storm(c).withFaces()).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("faces must name at least one face, each once, was []");
        assertThatThrownBy(() -> storm(c).withFaces(Face.ASYNC, Face.ASYNC)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("faces must name at least one face, each once, was [ASYNC, ASYNC]");
    }

    @Test
    void aStormCanRunThroughOneFaceOnly() throws Exception {
        ZombieStorm.Result r = storm(new InMemoryZombieStormTest.Counter(true)).withFaces(Face.ASYNC).withAttempts(20)
                .withStallProbability(0).build().run();
        assertThat(r.acquiredByFace()).containsExactly(java.util.Map.entry(Face.ASYNC, 20L));
        assertThat(r.summary()).contains("acquired=20 [ASYNC=20]");
        r.requireSafe();
    }

    @Test
    void theSizeCanComeFromASystemProperty() {
        String old = System.getProperty(ZombieStorm.ATTEMPTS_PROPERTY);
        try {
            System.clearProperty(ZombieStorm.ATTEMPTS_PROPERTY);
            assertThat(ZombieStorm.attemptsProperty(300)).isEqualTo(300);
            System.setProperty(ZombieStorm.ATTEMPTS_PROPERTY, "10000");
            assertThat(ZombieStorm.attemptsProperty(300)).isEqualTo(10_000);
            System.setProperty(ZombieStorm.ATTEMPTS_PROPERTY, "lots");
            assertThatThrownBy(() -> ZombieStorm.attemptsProperty(300)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("system property fenceguard.storm.attempts must be a whole number of attempts of at least 1, "
                            + "was 'lots'");
        } finally {
            if (old == null) {
                System.clearProperty(ZombieStorm.ATTEMPTS_PROPERTY);
            } else {
                System.setProperty(ZombieStorm.ATTEMPTS_PROPERTY, old);
            }
        }
    }
}
