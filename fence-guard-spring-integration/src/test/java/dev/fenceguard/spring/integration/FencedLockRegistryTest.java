package dev.fenceguard.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What the registry checks before any I/O, and its lock objects' life in the registry (in memory). */
class FencedLockRegistryTest {

    final FencedLockRegistry registry = FencedLockRegistry.builder(LockClient.of(new InMemoryLockBackend())).build();

    @Test
    void badKeysAndTtlsFailBeforeAnyIo() {
        assertThatThrownBy(() -> registry.obtain(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> registry.obtain(42)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lock keys of a FencedLockRegistry are Strings, was a java.lang.Integer");
        assertThatThrownBy(() -> registry.obtain("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> registry.obtain("a\u0000b")).isInstanceOf(IllegalArgumentException.class);
        FencedDistributedLock lock = registry.obtain("orders:42");
        assertThatThrownBy(() -> lock.lock(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("ttl must be whole milliseconds from 1 ms to 30 days, was PT0S");
        assertThatThrownBy(() -> lock.tryLock(Duration.ofSeconds(1), Duration.ofNanos(1_500_000)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> lock.tryLock(null, Duration.ofSeconds(1))).isInstanceOf(NullPointerException.class);
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(() -> FencedLockRegistry.builder(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> FencedLockRegistry.builder(LockClient.of(new InMemoryLockBackend())).withTtl(Duration.ofDays(31)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ttl must be whole milliseconds from 1 ms to 30 days");
        assertThatThrownBy(() -> registry.setRenewalTaskScheduler(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void obtainGivesOneLockPerKeyUntilItIsExpiredUnused() {
        FencedDistributedLock lock = registry.obtain("orders:42");
        assertThat(registry.obtain("orders:42")).isSameAs(lock);
        assertThat(registry.obtain("orders:43")).isNotSameAs(lock);
        lock.lock();
        registry.expireUnusedOlderThan(0);
        assertThat(registry.obtain("orders:42")).as("a held lock is kept").isSameAs(lock);
        registry.expireUnusedOlderThan(Long.MAX_VALUE);
        lock.unlock();
        assertThat(registry.obtain("orders:42")).as("used too recently").isSameAs(lock);
        registry.expireUnusedOlderThan(0);
        FencedDistributedLock fresh = registry.obtain("orders:42");
        assertThat(fresh).isNotSameAs(lock);
        lock.lock();
        assertThat(fresh.tryLock()).as("an evicted lock object still excludes the new one, through the store").isFalse();
        lock.unlock();
    }

    @Test
    void theDefaultTtlIsThirtySeconds() {
        assertThat(registry.ttl()).isEqualTo(Duration.ofSeconds(30)).isEqualTo(FencedLockRegistry.DEFAULT_TTL);
        assertThat(registry.obtain("k").toString()).isEqualTo("FencedDistributedLock[key=k, not held]");
    }
}
