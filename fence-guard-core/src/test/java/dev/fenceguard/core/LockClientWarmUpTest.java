package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.internal.ManualClock;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.micrometer.MicrometerLockMetrics;
import dev.fenceguard.core.micrometer.MicrometerLockObservations;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** The client's warm-up: its own dry run touches nothing the user sees; the backend's part is bounded and its errors pass through. */
class LockClientWarmUpTest {

    @Test
    void warmUpReachesTheBackendOnlyThroughItsWarmUpAndIsNeitherMeasuredNorObserved() {
        ScriptedBackend backend = new ScriptedBackend(new InMemoryLockBackend());
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        TestObservationRegistry observations = TestObservationRegistry.create();
        List<String> events = new ArrayList<>();
        LockClient client = LockClient.builder(backend).withMetrics(MicrometerLockMetrics.of(meters))
                .withObservations(MicrometerLockObservations.of(observations)).onEvents(new LockListener() {
                    @Override
                    public void onLeaseLost(Lease lease, Throwable cause) {
                        events.add("lost " + lease.key());
                    }

                    @Override
                    public void onReleaseFailed(Lease lease, Throwable error) {
                        events.add("release failed " + lease.key());
                    }
                }).build();

        client.warmUp();
        client.warmUp();
        client.async().warmUp().toCompletableFuture().join();

        assertThat(backend.warmUps).as("backend warm-ups, five rounds per client warm-up").hasValue(3 * 5);
        assertThat(backend.calls).as("lock calls that reached the user's backend").isEmpty();
        assertThat(meters.getMeters()).as("meters registered by warm-ups").isEmpty();
        TestObservationRegistryAssert.assertThat(observations).doesNotHaveAnyObservation();
        assertThat(events).as("listener events").isEmpty();
        try (Lease lease = client.tryAcquire("orders:1", Duration.ofSeconds(30)).orElseThrow()) {
            assertThat(lease.fence().value()).as("the first real fence").isEqualTo(1);
        }
    }

    @Test
    void aFailedBackendWarmUpFailsTheWarmUpWithItsCode() {
        ScriptedBackend backend = new ScriptedBackend(new InMemoryLockBackend());
        backend.warmUp = () -> CompletableFuture.failedFuture(new FenceGuardException(ErrorCode.UNAVAILABLE, null, "server down"));
        LockClient client = LockClient.builder(backend).withMetrics(LockMetrics.none()).build();
        assertThatThrownBy(client::warmUp).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
            assertThat(e.getMessage()).contains("server down");
        });
        assertThat(backend.warmUps).as("the first failed round ends the warm-up").hasValue(1);
        assertThatThrownBy(() -> client.async().warmUp().toCompletableFuture().join()).isInstanceOf(CompletionException.class)
                .cause().isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE));
    }

    @Test
    void aBackendWarmUpThatNeverAnswersTimesOutAtTheCallTimeout() {
        ScriptedBackend backend = new ScriptedBackend(new InMemoryLockBackend());
        backend.warmUp = CompletableFuture::new; // never completes
        ManualClock time = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
        AsyncLockClient client = LockClient.builder(backend).withTimeSource(time).withCallTimeout(Duration.ofSeconds(3))
                .withMetrics(LockMetrics.none()).build().async();
        CompletableFuture<Void> warming = client.warmUp().toCompletableFuture();
        time.advance(Duration.ofMillis(2_999));
        assertThat(warming).as("before the call timeout").isNotDone();
        time.advance(Duration.ofMillis(1));
        assertThatThrownBy(warming::join).cause().isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT);
            assertThat(e.key()).as("a warm-up concerns no key").isEmpty();
            assertThat(e.getMessage()).contains("warm-up of backend scripted");
        });
    }
}
