package dev.fenceguard.core.singleflight;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.internal.ManualClock;
import dev.fenceguard.core.memory.InMemoryFlightStore;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.micrometer.MicrometerSingleflightMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The singleflight meters on a Micrometer registry, driven by real flights on the in-memory model. */
class MicrometerSingleflightMetricsTest {

    @Test
    void sharedCallsFlightsLedWaitsAndRetainedResultsAreCountedWithBoundedTags() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ManualClock time = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
        InMemoryLockBackend locks = new InMemoryLockBackend(time);
        InMemoryFlightStore store = new InMemoryFlightStore(time);
        Singleflight[] processes = new Singleflight[2];
        for (int i = 0; i < 2; i++) {
            LockClient client = LockClient.builder(locks).withTimeSource(time).withMetrics(LockMetrics.none()).build();
            processes[i] = Singleflight.builder(client, store).withTimeSource(time)
                    .withMetrics(MicrometerSingleflightMetrics.of(registry)).withPollInterval(Duration.ofDays(1)).build();
        }
        CompletableFuture<byte[]> gate = new CompletableFuture<>();
        processes[0].async().run("k", Duration.ofSeconds(10), lease -> gate);
        processes[0].async().run("k", Duration.ofSeconds(10), lease -> gate);
        CompletableFuture<byte[]> waiter = processes[1].async().run("k", Duration.ofSeconds(10), lease -> gate).toCompletableFuture();
        gate.complete(new byte[] {7});
        assertThat(waiter).isCompletedWithValueMatching(b -> b.length == 1 && b[0] == 7);
        processes[1].async().run("k", Duration.ofSeconds(10), lease -> gate);

        assertThat(registry.get("fenceguard.singleflight.shared").tag("store", "in-memory").counter().count()).isEqualTo(1);
        assertThat(registry.get("fenceguard.singleflight.led").tags("store", "in-memory", "outcome", "published").counter().count())
                .isEqualTo(1);
        assertThat(registry.get("fenceguard.singleflight.wait").tags("store", "in-memory", "outcome", "result").timer().count())
                .isEqualTo(1);
        assertThat(registry.get("fenceguard.singleflight.retained").tag("store", "in-memory").counter().count()).isEqualTo(1);
        assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getTags())
                .allSatisfy(t -> assertThat(t.getKey()).isIn("store", "outcome")));
    }
}
