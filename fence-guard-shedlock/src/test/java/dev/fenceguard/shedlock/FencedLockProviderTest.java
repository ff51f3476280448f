package dev.fenceguard.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockContext;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.testkit.ManualTimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;

/** What ShedLock's suite does not show: the fence in the context, lockAtLeastFor by shortening, bad configurations. */
class FencedLockProviderTest {

    private final ManualTimeSource time = new ManualTimeSource(Instant.parse("2026-01-01T00:00:00Z"));
    private final LockClient locks = LockClient.builder(new InMemoryLockBackend(time)).withTimeSource(time).build();
    private final FencedLockProvider provider = FencedLockProvider.builder(locks).build();

    private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(ClockProvider.now(), name, atMost, atLeast);
    }

    @Test
    void lockPutsTheLeaseInThisThreadsContextAndUnlockTakesItOut() throws Exception {
        SimpleLock lock = provider.lock(config("job", Duration.ofMinutes(5), Duration.ZERO)).orElseThrow();
        Lease lease = LockContext.requireHeld("job");
        assertThat(locks.lookup("job")).map(LockInfo::fence).contains(lease.fence());
        assertThat(CompletableFuture.supplyAsync(() -> LockContext.current("job")).get())
                .as("another thread sees nothing").isEmpty();

        lock.unlock();
        assertThat(LockContext.current("job")).isEmpty();
        assertThat(locks.lookup("job")).as("released: lockAtLeastFor is zero").isEmpty();
    }

    @Test
    void extendKeepsTheFenceAndTheContext() {
        SimpleLock lock = provider.lock(config("job", Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
        Lease lease = LockContext.requireHeld("job");
        time.advance(Duration.ofSeconds(9));
        SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
        time.advance(Duration.ofSeconds(9)); // 18 s after the lock, 9 s after the extend
        assertThat(LockContext.requireHeld("job")).isSameAs(lease);
        assertThat(locks.lookup("job")).map(LockInfo::fence).contains(lease.fence());

        extended.unlock();
        assertThat(LockContext.current("job")).isEmpty();
        assertThat(locks.lookup("job")).isEmpty();
    }

    @Test
    void anExpiredLockIsNotExtendedAndLeavesTheContext() {
        SimpleLock lock = provider.lock(config("job", Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
        time.advance(Duration.ofSeconds(11));
        assertThat(lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
        assertThat(LockContext.current("job")).isEmpty();
        assertThat(locks.lookup("job")).isEmpty();
    }

    @Test
    void unlockBeforeLockAtLeastForShortensTheLeaseInsteadOfReleasingIt() {
        SimpleLock lock = provider.lock(config("job", Duration.ofMinutes(5), Duration.ofSeconds(10))).orElseThrow();
        Lease lease = LockContext.requireHeld("job");
        lock.unlock();

        assertThat(LockContext.current("job")).as("unlocked for ShedLock: out of the context").isEmpty();
        LockInfo held = locks.lookup("job").orElseThrow();
        assertThat(held.fence()).isEqualTo(lease.fence());
        assertThat(held.expiresAt()).as("ends when lockAtLeastFor does, not in 5 minutes")
                .isAfter(time.now().plusSeconds(9)).isBefore(time.now().plusSeconds(10).plusMillis(1));
        assertThat(provider.lock(config("job", Duration.ofMinutes(5), Duration.ZERO))).isEmpty();

        time.advance(Duration.ofSeconds(10));
        Optional<SimpleLock> next = provider.lock(config("job", Duration.ofMinutes(5), Duration.ZERO));
        assertThat(next).isPresent();
        assertThat(LockContext.requireHeld("job").fence()).isGreaterThan(lease.fence());
        next.orElseThrow().unlock();
    }

    @Test
    void badConfigurationsFailWithTheSettingNamedBeforeAnyLockIsTaken() {
        assertThatThrownBy(() -> provider.lock(config("job", Duration.ZERO, Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lockAtMostFor is the lease's TTL: whole milliseconds, 1 ms .. PT720H, was PT0S (lock 'job')");
        assertThatThrownBy(() -> provider.lock(config("job", Duration.ofNanos(1_500_000), Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lockAtMostFor is the lease's TTL: whole milliseconds, 1 ms .. PT720H, was PT0.0015S (lock 'job')");
        assertThatThrownBy(() -> provider.lock(config("job", Duration.ofDays(31), Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lockAtMostFor is the lease's TTL: whole milliseconds, 1 ms .. PT720H, was PT744H (lock 'job')");
        assertThatThrownBy(() -> provider.lock(config("job", Duration.ofSeconds(1), Duration.ofSeconds(-1))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lockAtLeastFor must not be negative, was PT-1S (lock 'job')");
        assertThatThrownBy(() -> provider.lock(config("a\u0000b", Duration.ofSeconds(1), Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("the ShedLock lock name must be a valid fence-guard lock key: ");
        assertThatThrownBy(() -> provider.lock(null)).isInstanceOf(NullPointerException.class).hasMessage("lockConfiguration");

        SimpleLock lock = provider.lock(config("job", Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
        assertThatThrownBy(() -> lock.extend(Duration.ZERO, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("lockAtMostFor is the lease's TTL");
        lock.unlock(); // a refused extend leaves the lock as it was
        assertThat(locks.lookup("job")).isEmpty();
        assertThat(LockContext.current("job")).isEmpty();
    }
}
