package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.internal.ManualClock;
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
    void purgedRecordsAreCountedByStoreAndKindThroughTheWriteRule() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        dev.fenceguard.core.spi.WriteRule rule = new dev.fenceguard.core.spi.WriteRule(FencePolicy.SAME_OR_NEWER, FenceEncoding.INTEGER,
                MicrometerLockMetrics.of(registry), "postgres");
        rule.purged("tombstone", 3);
        rule.purged("tombstone", 0);
        rule.purged("tombstone", 2);
        assertThat(registry.get("fenceguard.purge.removed").tag("store", "postgres").tag("kind", "tombstone").counter().count())
                .isEqualTo(5);
        assertThat(registry.find("fenceguard.purge.removed").tag("kind", "lock").counter()).isNull();
    }

    @Test
    void aRefusalBelowTheHorizonSaysSoAndCountsAsAStaleWrite() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        dev.fenceguard.core.spi.WriteRule rule = new dev.fenceguard.core.spi.WriteRule(FencePolicy.SAME_OR_NEWER, FenceEncoding.INTEGER,
                MicrometerLockMetrics.of(registry), "postgres");
        WriteOutcome.Stale below = rule.belowHorizon("t[id=1]", FenceToken.of(7), 100);
        assertThat(below).isEqualTo(new WriteOutcome.Stale("t[id=1]", 7, 100, FencePolicy.SAME_OR_NEWER, WriteOutcome.Stale.Reason.BELOW_HORIZON));
        assertThat(rule.stale("t[id=1]", FenceToken.of(7), 9).reason()).isEqualTo(WriteOutcome.Stale.Reason.NEWER_FENCE);
        assertThat(new WriteOutcome.Stale("t", 1, 2, FencePolicy.SAME_OR_NEWER).reason()).isEqualTo(WriteOutcome.Stale.Reason.NEWER_FENCE);
        assertThat(registry.get("fenceguard.write.stale").tag("resource", "postgres").counter().count()).isEqualTo(2);
        org.assertj.core.api.Assertions.assertThatThrownBy(below::orThrow).isInstanceOf(StaleFenceException.class)
                .hasMessage("STALE_FENCE (key 't[id=1]'): stale write rejected: presented fence 7 is at or below the horizon 100 and the resource has no fence"
                        + " record, so the write would create one (BELOW_HORIZON: a lease older than the horizon cannot create a key)");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> rule.stale("t", FenceToken.of(7), 9).orThrow())
                .hasMessageEndingWith("stale write rejected: presented fence 7 but the resource holds fence 9 (SAME_OR_NEWER)");
    }

    @Test
    void idempotencyHitsConflictsAndInProgressAnswersAreMetered() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        dev.fenceguard.core.idempotency.AsyncIdempotencyStore store = dev.fenceguard.core.idempotency.IdempotencyStore
                .builder(new dev.fenceguard.core.memory.InMemoryIdempotencyBackend()).withMetrics(dev.fenceguard.core.micrometer.MicrometerIdempotencyMetrics.of(registry)).build().async();
        var fp = dev.fenceguard.core.idempotency.Fingerprint.ofParts("charge", "1");
        var codec = dev.fenceguard.core.idempotency.ResultCodec.utf8();
        Duration ttl = Duration.ofSeconds(30);
        java.util.concurrent.CompletableFuture<String> running = new java.util.concurrent.CompletableFuture<>();
        var first = store.call("k", fp, FenceToken.of(1), ttl, codec, () -> running);
        assertThat(store.call("k", fp, FenceToken.of(2), ttl, codec, () -> running).toCompletableFuture().join())
                .isInstanceOf(dev.fenceguard.core.idempotency.IdempotencyResult.InProgress.class);
        running.complete("ch_1");
        first.toCompletableFuture().join();
        store.call("k", fp, FenceToken.of(2), ttl, codec, () -> running).toCompletableFuture().join();
        store.call("k", fp, FenceToken.of(3), ttl, codec, () -> running).toCompletableFuture().join();
        assertThat(store.call("k", dev.fenceguard.core.idempotency.Fingerprint.ofParts("other"), FenceToken.of(3), ttl, codec,
                () -> running).toCompletableFuture()).isCompletedExceptionally();

        assertThat(registry.get("fenceguard.idempotency").tag("backend", "in-memory").tag("answer", "in_progress").counter().count())
                .isEqualTo(1);
        assertThat(registry.get("fenceguard.idempotency").tag("answer", "hit").counter().count()).isEqualTo(2);
        assertThat(registry.get("fenceguard.idempotency").tag("answer", "conflict").counter().count()).isEqualTo(1);
    }

    @Test
    void lossWaitsAndHeldLeasesAreMeteredWhenTheyHappenAndOnlyThen() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ManualClock time = new ManualClock(java.time.Instant.parse("2026-01-01T00:00:00Z"));
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
    void lockNamesAreOffByDefault() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        LockClient client = LockClient.builder(new InMemoryLockBackend()).withMetrics(MicrometerLockMetrics.of(registry)).build();
        client.tryAcquire("orders:1", Duration.ofSeconds(30)).orElseThrow().close();
        assertThat(registry.getMeters()).isNotEmpty()
                .allSatisfy(m -> assertThat(m.getId().getTag("lock.name")).as(m.getId().toString()).isNull());
    }

    @Test
    void lockNamesTagEveryLockMeterAndFoldIntoOtherPastTheBound() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ManualClock time = new ManualClock(java.time.Instant.parse("2026-01-01T00:00:00Z"));
        InMemoryLockBackend memory = new InMemoryLockBackend(time);
        MicrometerLockMetrics metrics = MicrometerLockMetrics.builder(registry)
                .withLockNames(MicrometerLockMetrics.prefixUpTo(':'), 2).build();
        AsyncLockClient locks = LockClient.builder(memory).withTimeSource(time).withMetrics(metrics).build().async();
        Duration ttl = Duration.ofSeconds(30);

        for (String key : java.util.List.of("orders:1", "orders:2", "users:1", "carts:1", "jobs")) {
            locks.tryAcquire(key, ttl).toCompletableFuture().join().orElseThrow();
        }
        assertThat(registry.get("fenceguard.lock.acquire").tag("lock.name", "orders").timer().count()).isEqualTo(2);
        assertThat(registry.get("fenceguard.lock.acquire").tag("lock.name", "users").timer().count()).isEqualTo(1);
        assertThat(registry.get("fenceguard.lock.acquire").tag("lock.name", "other").timer().count()).as("carts and jobs").isEqualTo(2);
        assertThat(registry.find("fenceguard.lock.acquire").tag("lock.name", "carts").timers()).isEmpty();
        assertThat(registry.get("fenceguard.lock.held.now").tag("lock.name", "orders").gauge().value()).isEqualTo(2);
        assertThat(registry.get("fenceguard.lock.held.now").tag("lock.name", "other").gauge().value()).isEqualTo(2);

        // Loss and waits carry the name too.
        java.util.concurrent.CompletableFuture<String> work = new java.util.concurrent.CompletableFuture<>();
        locks.withLock("users:2", ttl, Duration.ZERO, lease -> {
            memory.release(lease.key(), lease.lockId());
            return work;
        });
        var waiting = locks.acquire("orders:1", ttl, Duration.ofSeconds(1)).toCompletableFuture();
        time.advance(Duration.ofSeconds(10));
        assertThat(waiting.join()).isEmpty();
        work.complete("done");
        assertThat(registry.get("fenceguard.lock.lost").tag("lock.name", "users").tag("cause", "taken_over").counter().count()).isEqualTo(1);
        assertThat(registry.get("fenceguard.lock.renew.failures").tag("lock.name", "users").counter().count()).isEqualTo(1);
        assertThat(registry.get("fenceguard.lock.held").tag("lock.name", "users").timer().count()).isEqualTo(1);
        assertThat(registry.get("fenceguard.lock.acquire.wait").tag("lock.name", "orders").tag("outcome", "gave_up").timer().count())
                .isEqualTo(1);
        assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getTag("lock.name")).as(m.getId().toString())
                .isIn("orders", "users", "other"));
    }

    @Test
    void eachMeterIsRegisteredOncePerTagSetHoweverOftenItMoves() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        java.util.List<String> registered = new java.util.concurrent.CopyOnWriteArrayList<>();
        registry.config().meterFilter(new io.micrometer.core.instrument.config.MeterFilter() {
            @Override
            public io.micrometer.core.instrument.Meter.Id map(io.micrometer.core.instrument.Meter.Id id) {
                registered.add(id.getName() + id.getTags());
                return id;
            }
        });
        LockClient client = LockClient.builder(new InMemoryLockBackend()).withMetrics(MicrometerLockMetrics.builder(registry)
                .withLockNames(MicrometerLockMetrics.prefixUpTo(':'), 10).build()).build();
        for (int i = 0; i < 50; i++) {
            client.tryAcquire("orders:" + i, Duration.ofSeconds(30)).orElseThrow().close();
        }
        assertThat(registered).doesNotHaveDuplicates()
                .containsExactlyInAnyOrder(
                        "fenceguard.lock.acquire[tag(backend=in-memory), tag(lock.name=orders), tag(outcome=acquired)]",
                        "fenceguard.lock.held.now[tag(backend=in-memory), tag(lock.name=orders)]",
                        "fenceguard.lock.held[tag(backend=in-memory), tag(lock.name=orders)]");
    }

    @Test
    void aFailingOrEmptyLockNameCountsAsOther() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        LockClient client = LockClient.builder(new InMemoryLockBackend()).withMetrics(MicrometerLockMetrics.builder(registry)
                .withLockNames(key -> switch (key) {
                    case "throws" -> throw new IllegalStateException("bug in the naming function");
                    case "null" -> null;
                    default -> "";
                }, 5).build()).build();
        for (String key : java.util.List.of("throws", "null", "empty")) {
            assertThat(client.tryAcquire(key, Duration.ofSeconds(30))).as(key).isPresent();
        }
        assertThat(registry.get("fenceguard.lock.acquire").tag("lock.name", "other").timer().count()).isEqualTo(3);
    }

    @Test
    void lockNameSettingsAreChecked() {
        MicrometerLockMetrics.Builder builder = MicrometerLockMetrics.builder(new SimpleMeterRegistry());
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> builder.withLockNames(k -> k, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxNames must be between 1 and 10000, was 0");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> builder.withLockNames(k -> k, 10_001))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxNames must be between 1 and 10000, was 10001");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> builder.withLockNames(null, 5))
                .isInstanceOf(NullPointerException.class).hasMessage("naming");
        assertThat(MicrometerLockMetrics.prefixUpTo(':').apply("orders:42:x")).isEqualTo("orders");
        assertThat(MicrometerLockMetrics.prefixUpTo(':').apply("no-separator")).isEqualTo("no-separator");
    }

    @Test
    void automaticMetricsUseMicrometerWhenItIsOnTheClassPath() {
        assertThat(LockMetrics.automatic()).isInstanceOf(MicrometerLockMetrics.class);
        assertThat(LockMetrics.none()).isNotInstanceOf(MicrometerLockMetrics.class);
    }
}
