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
    void lossWaitsAndHeldLeasesAreMeteredWhenTheyHappenAndOnlyThen() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ManualTimeSource time = new ManualTimeSource(java.time.Instant.parse("2026-01-01T00:00:00Z"));
        dev.fenceguard.core.memory.InMemoryLockBackend memory = new InMemoryLockBackend(time);
        ScriptedBackend backend = new ScriptedBackend(memory);
        AsyncLockClient locks = LockClient.builder(backend).withTimeSource(time).withMetrics(MicrometerLockMetrics.of(registry))
                .build().async();
        Duration ttl = Duration.ofSeconds(30);

        Lease blocker = locks.tryAcquire("k", ttl).toCompletableFuture().join().orElseThrow();
        assertThat(registry.get("fenceguard.lock.held.now").tag("backend", "scripted").gauge().value()).isEqualTo(1);
        var waiting = locks.acquire("k", ttl, Duration.ofSeconds(5)).toCompletableFuture();
        assertThat(registry.find("fenceguard.lock.acquire.wait").timers()).as("nothing until the wait ends").isEmpty();
        time.advance(Duration.ofSeconds(5));
        assertThat(waiting.join()).isEmpty();
        assertThat(registry.get("fenceguard.lock.acquire.wait").tag("outcome", "gave_up").timer().count()).isEqualTo(1);
        assertThat(registry.get("fenceguard.lock.acquire.wait").tag("outcome", "gave_up").timer().totalTime(java.util.concurrent.TimeUnit.SECONDS))
                .isEqualTo(5.0);
        blocker.close();
        assertThat(registry.get("fenceguard.lock.held.now").gauge().value()).isZero();

        // Taken over behind the holder's back: the next renewal finds it gone.
        java.util.concurrent.CompletableFuture<String> work = new java.util.concurrent.CompletableFuture<>();
        locks.withLock("job", ttl, Duration.ZERO, lease -> {
            memory.release(lease.key(), lease.lockId());
            return work;
        });
        assertThat(registry.get("fenceguard.lock.held.now").gauge().value()).isEqualTo(1);
        assertThat(registry.find("fenceguard.lock.lost").counters()).isEmpty();
        time.advance(Duration.ofSeconds(10));
        assertThat(registry.get("fenceguard.lock.lost").tag("cause", "taken_over").counter().count()).isEqualTo(1);
        assertThat(registry.get("fenceguard.lock.held.now").gauge().value()).isZero();
        work.complete("done");

        // Unreachable: every renewal fails until the local deadline.
        java.util.concurrent.CompletableFuture<String> work2 = new java.util.concurrent.CompletableFuture<>();
        locks.withLock("job2", ttl, Duration.ZERO, lease -> work2);
        backend.failExtend = true;
        time.advance(Duration.ofSeconds(29));
        assertThat(registry.find("fenceguard.lock.lost").tag("cause", "unreachable").counters()).isEmpty();
        time.advance(Duration.ofSeconds(1));
        assertThat(registry.get("fenceguard.lock.lost").tag("cause", "unreachable").counter().count()).isEqualTo(1);
        assertThat(registry.get("fenceguard.lock.renew.failures").counter().count()).isGreaterThanOrEqualTo(2);
        work2.complete("done");
        assertThat(registry.get("fenceguard.lock.held.now").gauge().value()).isZero();
        assertThat(registry.get("fenceguard.lock.lost").tag("cause", "taken_over").counter().count()).as("unchanged").isEqualTo(1);
    }

    @Test
    void automaticMetricsUseMicrometerWhenItIsOnTheClassPath() {
        assertThat(LockMetrics.automatic()).isInstanceOf(MicrometerLockMetrics.class);
        assertThat(LockMetrics.none()).isNotInstanceOf(MicrometerLockMetrics.class);
    }
}
