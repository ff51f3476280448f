package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.internal.ManualClock;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120) // a guard against a hang, not a timing assertion
class AsyncLockClientTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    private final ManualClock time = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final InMemoryLockBackend memory = new InMemoryLockBackend(time);
    private final ScriptedBackend backend = new ScriptedBackend(memory);
    private final List<String> events = new CopyOnWriteArrayList<>();
    private final LockClient blocking = LockClient.builder(backend).withTimeSource(time).withMetrics(LockMetrics.none())
            .onEvents(new LockListener() {
                @Override
                public void onLeaseLost(Lease lease, Throwable cause) {
                    events.add("lost " + lease.key());
                }

                @Override
                public void onReleaseFailed(Lease lease, Throwable error) {
                    events.add("release failed " + lease.key());
                }
            }).build();
    private final AsyncLockClient locks = blocking.async();

    @Test
    void withLockRenewsWhileTheStageIsPendingAndReleasesWhenItCompletes() {
        CompletableFuture<String> work = new CompletableFuture<>();
        CompletableFuture<Optional<String>> result = locks.withLock("job", TTL, Duration.ZERO, lease -> work).toCompletableFuture();
        for (int i = 0; i < 6; i++) {
            time.advance(Duration.ofSeconds(10));
        }
        assertThat(backend.calls).filteredOn("extend job"::equals).hasSize(6);
        assertThat(blocking.lookup("job")).as("renewed past three TTLs").isPresent();
        work.complete("done");
        assertThat(result).isCompletedWithValue(Optional.of("done"));
        assertThat(blocking.lookup("job")).isEmpty();
        time.advance(Duration.ofMinutes(1));
        assertThat(backend.calls).as("renewal stopped").filteredOn("extend job"::equals).hasSize(6);
    }

    @Test
    void withLockReleasesWhenTheWorkFailsOrThrows() {
        CompletableFuture<String> work = new CompletableFuture<>();
        CompletableFuture<Optional<String>> result = locks.withLock("job", TTL, Duration.ZERO, lease -> work).toCompletableFuture();
        work.completeExceptionally(new IllegalStateException("payment declined"));
        assertThatThrownBy(result::join).isInstanceOf(CompletionException.class).hasCauseInstanceOf(IllegalStateException.class);
        assertThat(blocking.lookup("job")).isEmpty();

        CompletableFuture<Optional<String>> thrown = locks.<String>withLock("job", TTL, Duration.ZERO, lease -> {
            throw new IllegalArgumentException("bad order");
        }).toCompletableFuture();
        assertThatThrownBy(thrown::join).hasCauseInstanceOf(IllegalArgumentException.class);
        assertThat(blocking.lookup("job")).isEmpty();
    }

    @Test
    void cancellingWithLockCancelsTheWorkAndReleases() {
        CompletableFuture<String> work = new CompletableFuture<>();
        CompletableFuture<Optional<String>> result = locks.withLock("job", TTL, Duration.ZERO, lease -> work).toCompletableFuture();
        assertThat(blocking.lookup("job")).isPresent();
        result.cancel(true);
        assertThat(work).isCancelled();
        assertThat(blocking.lookup("job")).isEmpty();
    }

    @Test
    void cancellingAWaitingAcquireLeavesNoLockBehind() {
        Lease holder = blocking.tryAcquire("k", TTL).orElseThrow();
        CompletableFuture<Optional<Lease>> waiting = locks.acquire("k", TTL, Duration.ofMinutes(5)).toCompletableFuture();
        waiting.cancel(false);
        holder.close();
        time.advance(Duration.ofMinutes(6));
        assertThat(backend.calls).filteredOn("acquire k"::equals).as("no retry after the cancel").hasSize(2);
        assertThat(blocking.lookup("k")).isEmpty();
    }

    @Test
    void acquireAllIsAllOrNothingAndHoldsNoThread() {
        Lease blocker = blocking.tryAcquire("b", TTL).orElseThrow();
        CompletableFuture<Optional<LeaseSet>> all = locks.acquireAll(List.of("c", "a", "b"), TTL, Duration.ofSeconds(5)).toCompletableFuture();
        assertThat(all).isNotDone();
        time.advance(Duration.ofSeconds(5));
        assertThat(all).isCompletedWithValue(Optional.empty());
        assertThat(blocking.lookup("a")).as("rolled back").isEmpty();
        blocker.close();
        LeaseSet set = locks.acquireAll(List.of("c", "a", "b"), TTL, Duration.ZERO).toCompletableFuture().join().orElseThrow();
        assertThat(set.leases()).extracting(l -> l.key().value()).containsExactly("a", "b", "c");
        set.close();
    }

    @Test
    void anErrorThrownByTheBackendOnTheTimerThreadFailsTheStageInsteadOfLeavingItPending() {
        Lease blocker = blocking.tryAcquire("k", TTL).orElseThrow();
        CompletableFuture<Optional<Lease>> waiting = locks.acquire("k", TTL, Duration.ofSeconds(30)).toCompletableFuture();
        assertThat(waiting).isNotDone();
        backend.failAcquire = key -> {
            throw new AssertionError("a backend bug on the retry");
        };
        time.advance(Duration.ofSeconds(5)); // the retries run on the clock's timer
        assertThat(waiting).isCompletedExceptionally();
        assertThatThrownBy(waiting::join).hasRootCauseInstanceOf(AssertionError.class).hasRootCauseMessage("a backend bug on the retry");
        backend.failAcquire = key -> false;
        blocker.close();
    }

    @Test
    void badInputFailsAtOnceBeforeAnyIo() {
        assertThatThrownBy(() -> locks.acquire("", TTL, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.tryAcquire("k", Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> locks.withLock("k", TTL, Duration.ofSeconds(-1), l -> CompletableFuture.completedFuture(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(backend.calls).isEmpty();
    }

    @Test
    void aLeaseIsNotTiedToAThread() throws Exception {
        LockClient real = LockClient.builder(new InMemoryLockBackend()).withMetrics(LockMetrics.none()).build();
        CompletableFuture<Lease> acquired = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> acquired.complete(real.tryAcquire("t", TTL).orElseThrow())).join();
        Lease lease = acquired.join();
        CompletableFuture<Boolean> extended = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> extended.complete(real.extend(lease, TTL))).join();
        assertThat(extended.join()).as("extended on a virtual thread").isTrue();
        CompletableFuture<Boolean> released = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> released.complete(real.release(lease))).join();
        assertThat(released.join()).as("released on a third thread").isTrue();
        assertThat(real.lookup("t")).isEmpty();
    }

    @Test
    void tenThousandWaitersGetTheLockInTurnOnAFewPlatformThreads() throws Exception {
        LockClient real = LockClient.builder(new InMemoryLockBackend()).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(1), Duration.ofMillis(50)).build();
        AsyncLockClient async = real.async();
        int before = platformThreads();
        Lease blocker = real.tryAcquire("hot", TTL).orElseThrow();
        ConcurrentLinkedQueue<Long> fences = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Optional<Long>>> waiters = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            waiters.add(async.withLock("hot", TTL, Duration.ofMinutes(2), lease -> {
                fences.add(lease.fence().value());
                return CompletableFuture.completedFuture(lease.fence().value());
            }).toCompletableFuture());
        }
        int whileWaiting = platformThreads();
        assertThat(waiters).as("all are waiting for the blocker").noneMatch(CompletableFuture::isDone);
        blocker.close();
        CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(100, TimeUnit.SECONDS);
        assertThat(whileWaiting - before).as("platform threads added while 10,000 callers wait").isLessThanOrEqualTo(2);
        assertThat(waiters).allSatisfy(w -> assertThat(w.join()).isPresent());
        List<Long> inOrder = new ArrayList<>(fences);
        assertThat(inOrder).hasSize(10_000).isSorted().doesNotHaveDuplicates();
        assertThat(real.lookup("hot")).as("nothing left locked").isEmpty();
    }

    @Test
    void waitersGiveUpAtTheirDeadline() {
        Lease blocker = blocking.tryAcquire("hot", TTL).orElseThrow();
        List<CompletableFuture<Optional<Lease>>> waiters = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            waiters.add(locks.acquire("hot", TTL, Duration.ofSeconds(5)).toCompletableFuture());
        }
        time.advance(Duration.ofSeconds(5));
        assertThat(waiters).allSatisfy(w -> assertThat(w).isCompletedWithValue(Optional.empty()));
        assertThat(blocking.lookup("hot")).map(LockInfo::fence).contains(blocker.fence());
    }

    private static int platformThreads() {
        return Thread.getAllStackTraces().size(); // virtual threads are not listed
    }
}
