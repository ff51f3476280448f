package dev.fenceguard.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.reactor.SpyBackend.Event;
import dev.fenceguard.testkit.BlockingBackend;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** Bad input fails when the method is called, before any subscription and so before any I/O. */
class ReactiveLockClientInputTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private final InMemoryLockBackend backend = new InMemoryLockBackend();
    private final SpyBackend spy = new SpyBackend(backend);
    private final ReactiveLockClient locks = ReactiveLockClient.of(LockClient.builder(spy).withMetrics(LockMetrics.none()).build());

    @Test
    void invalidKeysTtlsAndWaitsThrowAtOnceAndSendNothing() {
        assertThatThrownBy(() -> locks.tryAcquire("", TTL)).as("empty key")
                .isInstanceOf(IllegalArgumentException.class).hasMessage("lock key must not be empty");
        assertThatThrownBy(() -> locks.tryAcquire("k\0", TTL)).as("NUL in the key")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NUL");
        assertThatThrownBy(() -> locks.acquire("k", Duration.ZERO, TTL)).as("zero TTL")
                .isInstanceOf(IllegalArgumentException.class).hasMessage("ttl must be at least 1 ms, was PT0S (lock 'k')");
        assertThatThrownBy(() -> locks.withLock("k", Duration.ofNanos(1_500_000), TTL, lease -> Mono.just(1))).as("1.5 ms TTL")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("whole number of milliseconds");
        assertThatThrownBy(() -> locks.acquire("k", TTL, Duration.ofSeconds(-1))).as("negative wait")
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxWait must not be negative, was PT-1S (lock 'k')");
        assertThatThrownBy(() -> locks.acquireAll(List.of(), TTL, TTL)).as("no keys")
                .isInstanceOf(IllegalArgumentException.class).hasMessage("acquireAll needs at least one key");
        assertThatThrownBy(() -> locks.acquireAll(List.of("a", ""), TTL, TTL)).as("one bad key among good ones")
                .isInstanceOf(IllegalArgumentException.class).hasMessage("lock key must not be empty");
        assertThatThrownBy(() -> locks.lookup("")).as("lookup of an empty key").isInstanceOf(IllegalArgumentException.class);
        assertThat(spy.count(Event.ACQUIRE_SENT)).isZero();
    }

    @Test
    void nullsThrowAtOnce() {
        assertThatThrownBy(() -> ReactiveLockClient.of(null)).isInstanceOf(NullPointerException.class).hasMessage("locks");
        assertThatThrownBy(() -> locks.tryAcquire(null, TTL)).isInstanceOf(NullPointerException.class).hasMessage("lock key");
        assertThatThrownBy(() -> locks.tryAcquire("k", null)).isInstanceOf(NullPointerException.class).hasMessage("ttl");
        assertThatThrownBy(() -> locks.acquire("k", TTL, null)).isInstanceOf(NullPointerException.class).hasMessage("maxWait");
        assertThatThrownBy(() -> locks.withLock("k", TTL, TTL, null)).isInstanceOf(NullPointerException.class).hasMessage("work");
        assertThatThrownBy(() -> locks.release((Lease) null)).isInstanceOf(NullPointerException.class).hasMessage("lease");
        assertThatThrownBy(() -> locks.acquireAll(null, TTL, TTL)).isInstanceOf(NullPointerException.class).hasMessage("keys");
        assertThat(spy.count(Event.ACQUIRE_SENT)).isZero();
    }

    @Test
    void aLeaseOfAnotherClientIsRefusedBeforeAnyIo() {
        Lease foreign = LockClient.of(new InMemoryLockBackend()).tryAcquire("k", TTL).orElseThrow();
        StepVerifier.create(locks.release(foreign))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("was issued by another LockClient"))
                .verify(TTL);
        StepVerifier.create(locks.extend(foreign, TTL))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("was issued by another LockClient"))
                .verify(TTL);
        assertThat(spy.count(Event.RELEASE_ANSWERED)).isZero();
        assertThat(spy.count(Event.EXTENDED)).isZero();
    }

    @Test
    void workThatReturnsNoMonoFailsAndReleasesTheLock() {
        StepVerifier.create(locks.withLock("k", TTL, TTL, lease -> null))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(NullPointerException.class)
                        .hasMessage("withLock work must not return a null Mono"))
                .verify(TTL);
        assertThat(BlockingBackend.of(backend).lookup(LockKey.of("k"))).isEmpty();
        assertThat(spy.count(Event.RELEASED)).isEqualTo(1);
    }

    @Test
    void theSubscribersContextReachesTheWork() {
        Mono<String> seen = locks.withLock("ctx", TTL, TTL, lease -> Mono.deferContextual(c -> Mono.just(c.<String>get("tenant"))));
        StepVerifier.create(seen.contextWrite(c -> c.put("tenant", "acme"))).expectNext("acme").verifyComplete();
    }
}
