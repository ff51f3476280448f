package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.internal.ManualClock;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class LeaseWhenLostTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    private final ManualClock time = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final ScriptedBackend backend = new ScriptedBackend(new InMemoryLockBackend(time));
    private final AsyncLockClient locks = LockClient.builder(backend).withTimeSource(time).withMetrics(LockMetrics.none()).build().async();

    @Test
    void completesWithTheCauseWhenTheLeaseIsDeclaredLost() {
        CompletableFuture<LossCause> lost = new CompletableFuture<>();
        CompletableFuture<String> work = new CompletableFuture<>();
        locks.withLock("job", TTL, Duration.ZERO, lease -> {
            lease.whenLost().thenAccept(lost::complete);
            return work;
        });
        backend.failExtend = true;
        time.advance(TTL.minusSeconds(1));
        assertThat(lost).as("not lost while time is left").isNotDone();
        time.advance(Duration.ofSeconds(1));
        assertThat(lost).isCompletedWithValue(LossCause.UNREACHABLE);
        work.complete("done");
    }

    @Test
    void completesWithTakenOverWhenTheBackendNoLongerHoldsIt() {
        CompletableFuture<LossCause> lost = new CompletableFuture<>();
        Lease lease = locks.tryAcquire("job", TTL).toCompletableFuture().join().orElseThrow();
        lease.whenLost().thenAccept(lost::complete);
        backend.delegate.release(lease.key(), lease.lockId()); // an operator freed it behind our back
        assertThat(locks.extend(lease, TTL).toCompletableFuture().join()).isFalse();
        assertThat(lost).isCompletedWithValue(LossCause.TAKEN_OVER);
    }

    @Test
    void neverCompletesForALeaseReleasedFirst() {
        CompletableFuture<Optional<String>> result = locks.withLock("job", TTL, Duration.ZERO,
                lease -> {
                    lease.whenLost().thenAccept(cause -> {
                        throw new AssertionError("a released lease was reported lost: " + cause);
                    });
                    return CompletableFuture.completedFuture("done");
                }).toCompletableFuture();
        assertThat(result).isCompletedWithValue(Optional.of("done"));
        Lease again = locks.tryAcquire("job", TTL).toCompletableFuture().join().orElseThrow();
        time.advance(TTL.multipliedBy(3));
        assertThat(again.whenLost().toCompletableFuture()).as("an unrenewed lease past its TTL is not declared lost by anyone")
                .isNotDone();
    }
}
