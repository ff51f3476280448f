package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.micrometer.MicrometerLockMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class MicrometerMetricsTest {

    @Test
    void acquisitionsHoldTimesAndStaleWritesAreMetered() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        LockClient client = LockClient.builder(new InMemoryLockBackend()).withMetrics(MicrometerLockMetrics.of(registry)).build();
        Lease lease = client.tryAcquire("k", Duration.ofSeconds(30)).orElseThrow();
        assertThat(client.tryAcquire("k", Duration.ofSeconds(30))).isEmpty();
        lease.close();
        MicrometerLockMetrics.of(registry).staleWriteRejected("postgres");

        assertThat(registry.get("fenceguard.lock.acquire").tag("backend", "in-memory").tag("outcome", "acquired").timer().count()).isEqualTo(1);
        assertThat(registry.get("fenceguard.lock.acquire").tag("outcome", "held").timer().count()).isEqualTo(1);
        assertThat(registry.get("fenceguard.lock.held").timer().count()).isEqualTo(1);
        assertThat(registry.get("fenceguard.write.stale").tag("resource", "postgres").counter().count()).isEqualTo(1);
    }

    @Test
    void automaticMetricsUseMicrometerWhenItIsOnTheClassPath() {
        assertThat(LockMetrics.automatic()).isInstanceOf(MicrometerLockMetrics.class);
        assertThat(LockMetrics.none()).isNotInstanceOf(MicrometerLockMetrics.class);
    }
}
