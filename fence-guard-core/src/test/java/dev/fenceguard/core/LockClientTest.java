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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60) // a guard against a hang, not a timing assertion
class LockClientTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    private final ManualClock time = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final InMemoryLockBackend memory = new InMemoryLockBackend(time);
    private final ScriptedBackend backend = new ScriptedBackend(memory);
    private final List<String> events = new CopyOnWriteArrayList<>();
    /** Threads of the test's own for blocking work: the common pool may have one worker on 2 cores. */
    private final ExecutorService workers = Executors.newCachedThreadPool();

    @AfterEach
    void stopWorkers() {
        workers.shutdownNow(); // a failed test must not leave work blocked for the next one
    }
    private final LockClient client = LockClient.builder(backend).withTimeSource(time).withMetrics(LockMetrics.none())
            .onEvents(new LockListener() {
                @Override
                public void onLeaseLost(Lease lease, Throwable cause) {
                    events.add("lost " + lease.key() + (cause == null ? "" : " after " + cause.getClass().getSimpleName()));
                }

                @Override
                public void onRenewFailed(Lease lease, Throwable error) {
                    events.add("renew failed " + lease.key());
                }

                @Override
                public void onReleaseFailed(Lease lease, Throwable error) {
                    events.add("release failed " + lease.key());
                }
            }).build();

    @Test
    void eachAcquisitionGetsAGreaterFenceAndContentionIsAResult() {
        Lease first = client.tryAcquire("orders:1", TTL).orElseThrow();
        assertThat(first.fence().value()).isEqualTo(1);
        assertThat(client.tryAcquire("orders:1", TTL)).isEmpty();
        assertThat(client.release(first)).isTrue();
        Lease second = client.tryAcquire("orders:1", TTL).orElseThrow();
        assertThat(second.fence()).isGreaterThan(first.fence());
        assertThat(client.tryAcquire("orders:2", TTL).orElseThrow().fence().value()).isEqualTo(1);
    }

    @Test
    void leaseExpiresLocallyAtTheTtlCountedFromSendTime() {
        Lease lease = client.tryAcquire("k", TTL).orElseThrow();
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.expiresAt()).isEqualTo(Instant.parse("2026-01-01T00:00:30Z"));
        time.advance(Duration.ofSeconds(29));
        assertThat(lease.remaining()).isEqualTo(Duration.ofSeconds(1));
        time.advance(Duration.ofSeconds(1));
        assertThat(lease.isValid()).isFalse();
        Lease next = client.tryAcquire("k", TTL).orElseThrow();
        assertThat(next.fence().value()).isEqualTo(2);
        assertThat(client.release(lease)).as("a superseded lease cannot release the new holder").isFalse();
        assertThat(client.lookup("k")).map(LockInfo::fence).contains(next.fence());
    }

    @Test
    void closeIsIdempotentAndNeverThrows() {
        Lease lease = client.tryAcquire("k", TTL).orElseThrow();
        backend.failRelease = true;
        lease.close();
        lease.close();
        assertThat(events).containsExactly("release failed k");
        assertThat(backend.calls).filteredOn(c -> c.startsWith("release")).hasSize(1);
        assertThat(client.release(lease)).isFalse();
    }

    @Test
    void extendKeepsTheFenceAndNeverRevivesAnExpiredLease() {
        Lease lease = client.tryAcquire("k", TTL).orElseThrow();
        time.advance(Duration.ofSeconds(20));
        assertThat(client.extend(lease, TTL)).isTrue();
        assertThat(lease.fence().value()).isEqualTo(1);
        assertThat(lease.expiresAt()).isEqualTo(Instant.parse("2026-01-01T00:00:50Z"));
        time.advance(Duration.ofSeconds(29));
        assertThat(lease.isValid()).isTrue();
        time.advance(Duration.ofSeconds(1));
        assertThat(client.extend(lease, TTL)).isFalse();
        assertThat(lease.isLost()).isTrue();
        assertThat(client.lookup("k")).isEmpty();
    }

    @Test
    void exhaustedKeyFailsClearlyAndLeavesNoLock() {
        memory.advanceFence("k", FenceToken.MAX_VALUE);
        assertThatThrownBy(() -> client.tryAcquire("k", TTL)).isInstanceOfSatisfying(FenceGuardException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.FENCE_EXHAUSTED));
        assertThat(client.lookup("k")).isEmpty();
    }

    @Test
    void aBackendThatIssuesAnOutOfRangeFenceIsRefusedAndItsLockReleased() {
        backend.fenceOverride = FenceToken.MAX_VALUE + 1;
        assertThatThrownBy(() -> client.tryAcquire("k", TTL)).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.FENCE_EXHAUSTED);
            assertThat(e.key()).contains("k");
        });
        assertThat(memory.lookup(LockKey.of("k"))).as("no lock left behind").isEmpty();
    }

    @Test
    void highFencesAreCountedOncePerAcquisition() {
        List<String> high = new ArrayList<>();
        LockMetrics recording = new RecordingMetrics(high);
        LockClient measured = LockClient.builder(memory).withTimeSource(time).withMetrics(recording).build();
        memory.advanceFence("hot", FenceToken.WARN_THRESHOLD);
        measured.tryAcquire("hot", TTL).orElseThrow().close();
        measured.tryAcquire("hot", TTL).orElseThrow().close();
        assertThat(high).containsExactly("high in-memory", "high in-memory");
    }

    @Test
    void badInputFailsBeforeAnyIo() {
        assertThatThrownBy(() -> client.tryAcquire("", TTL)).hasMessage("lock key must not be empty");
        assertThatThrownBy(() -> client.tryAcquire("k", Duration.ZERO)).hasMessage("ttl must be at least 1 ms, was PT0S (lock 'k')");
        assertThatThrownBy(() -> client.tryAcquire("k", Duration.ofNanos(1_500_000)))
                .hasMessage("ttl must be a whole number of milliseconds, was PT0.0015S (lock 'k')");
        assertThatThrownBy(() -> client.tryAcquire("k", Duration.ofDays(31))).hasMessageStartingWith("ttl must be at most PT720H");
        assertThatThrownBy(() -> client.acquire("k", TTL, Duration.ofSeconds(-1)))
                .hasMessage("maxWait must not be negative, was PT-1S (lock 'k')");
        assertThatThrownBy(() -> client.acquireAll(List.of(), TTL, TTL)).hasMessage("acquireAll needs at least one key");
        assertThatThrownBy(() -> client.acquireAll(List.of("a", "b\0"), TTL, TTL)).hasMessageContaining("NUL");
        assertThat(backend.calls).as("nothing reached the backend").isEmpty();
    }

    @Test
    void leasesFromAnotherClientAreRejected() {
        LockClient other = LockClient.builder(memory).withTimeSource(time).build();
        Lease lease = other.tryAcquire("k", TTL).orElseThrow();
        assertThatThrownBy(() -> client.release(lease)).hasMessageContaining("issued by another LockClient");
    }

    @Test
    void acquireWaitsWithBackoffUntilTheHolderLetsGo() throws Exception {
        Lease holder = client.tryAcquire("k", TTL).orElseThrow();
        CompletableFuture<Optional<Lease>> waiter = client.async().acquire("k", TTL, Duration.ofSeconds(10)).toCompletableFuture();
        assertThat(backend.calls).containsExactly("acquire k", "acquire k");
        assertThat(waiter).as("the retry is a timer task, not a sleeping thread").isNotDone();
        holder.close();
        time.advance(Duration.ofSeconds(2)); // past the first backoff delay (at most 10 ms, then 20 ms, ...)
        assertThat(waiter).isCompleted();
        assertThat(waiter.join()).map(l -> l.fence().value()).contains(2L);
        CompletableFuture<Optional<Lease>> late = client.async().acquire("k", TTL, Duration.ofSeconds(3)).toCompletableFuture();
        time.advance(Duration.ofSeconds(3));
        assertThat(late).as("gives up after maxWait").isCompletedWithValue(Optional.empty());
    }

    @Test
    void acquireIsInterruptibleAndHoldsNothingAfterwards() throws Exception {
        Lease holder = client.tryAcquire("k", TTL).orElseThrow();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread waiter = Thread.ofPlatform().start(() -> {
            try {
                client.acquire("k", TTL, Duration.ofMinutes(5));
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        awaitCalls("acquire k", 2); // the waiter tried once and is now waiting for its retry
        waiter.interrupt();
        waiter.join();
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        holder.close();
        time.advance(Duration.ofMinutes(6)); // the cancelled waiter's retries never run
        assertThat(backend.calls).filteredOn("acquire k"::equals).hasSize(2);
        assertThat(client.lookup("k")).isEmpty();
    }

    @Test
    void aGrantThatArrivesAfterTheCallerGaveUpIsReleased() {
        backend.hangAcquire = true;
        CompletableFuture<Optional<Lease>> attempt = client.async().tryAcquire("k", TTL).toCompletableFuture();
        time.advance(Duration.ofSeconds(10)); // the call timeout
        assertThat(attempt).isCompletedExceptionally();
        assertThatThrownBy(attempt::join).hasCauseInstanceOf(FenceGuardException.class).hasMessageContaining("TIMEOUT");
        backend.hangAcquire = false;
        backend.answerHungCalls(); // the server grants now, too late
        assertThat(backend.calls).containsExactly("acquire k", "release k");
        assertThat(client.lookup("k")).as("no lock left behind").isEmpty();

        backend.hangAcquire = true;
        CompletableFuture<Optional<Lease>> cancelled = client.async().acquire("k", TTL, Duration.ofMinutes(1)).toCompletableFuture();
        cancelled.cancel(false);
        backend.hangAcquire = false;
        backend.answerHungCalls();
        assertThat(client.lookup("k")).as("a grant after a cancel is released").isEmpty();
    }

    @Test
    void acquireAllTakesKeysInGlobalOrder() throws Exception {
        try (LeaseSet set = client.acquireAll(List.of("c", "a", "b", "a"), TTL, Duration.ZERO).orElseThrow()) {
            assertThat(set.leases()).extracting(l -> l.key().value()).containsExactly("a", "b", "c");
            assertThat(set.get("b").fence().value()).isEqualTo(1);
            assertThat(set.isValid()).isTrue();
        }
        assertThat(backend.calls).containsExactly("acquire a", "acquire b", "acquire c", "release c", "release b", "release a");
    }

    @Test
    void acquireAllRollsBackWhenOneKeyIsHeld() throws Exception {
        Lease blocker = client.tryAcquire("b", TTL).orElseThrow();
        backend.calls.clear();
        assertThat(client.acquireAll(List.of("a", "b", "c"), TTL, Duration.ZERO)).isEmpty();
        assertThat(backend.calls).containsExactly("acquire a", "acquire b", "release a");
        assertThat(client.lookup("a")).isEmpty();
        assertThat(client.lookup("c")).isEmpty();
        assertThat(client.lookup("b")).map(LockInfo::fence).contains(blocker.fence());
    }

    @Test
    void acquireAllRollsBackWhenTheBackendFailsMidway() {
        backend.failAcquire = k -> k.value().equals("c");
        assertThatThrownBy(() -> client.acquireAll(List.of("c", "b", "a"), TTL, Duration.ZERO))
                .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE));
        assertThat(backend.calls).containsExactly("acquire a", "acquire b", "acquire c", "release b", "release a");
        assertThat(client.lookup("a")).isEmpty();
        assertThat(client.lookup("b")).isEmpty();
    }

    @Test
    void withLockPassesTheLeaseRenewsItAndReleasesIt() throws Exception {
        CountDownLatch workStarted = new CountDownLatch(1);
        CountDownLatch finishWork = new CountDownLatch(1);
        AtomicReference<Lease> seen = new AtomicReference<>();
        CompletableFuture<Optional<Long>> result = CompletableFuture.supplyAsync(() -> {
            try {
                return client.withLock("job", TTL, Duration.ZERO, lease -> {
                    seen.set(lease);
                    workStarted.countDown();
                    finishWork.await();
                    return lease.fence().value();
                });
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, workers);
        workStarted.await();
        // Six renewal periods of 10 s: without renewal the 30 s lease would be gone after three.
        for (int i = 0; i < 6; i++) {
            time.advance(Duration.ofSeconds(10));
            assertThat(backend.calls).filteredOn("extend job"::equals).hasSize(i + 1);
        }
        assertThat(seen.get().isValid()).isTrue();
        assertThat(client.lookup("job")).isPresent();
        finishWork.countDown();
        assertThat(result.get()).contains(1L);
        assertThat(client.lookup("job")).as("released when the work ended").isEmpty();
        assertThat(events).isEmpty();
        time.advance(Duration.ofMinutes(1));
        assertThat(backend.calls).as("renewal stopped with the work").filteredOn("extend job"::equals).hasSize(6);
    }

    @Test
    void withLockReportsLossWhenTheBackendNoLongerHoldsTheLease() throws Exception {
        CountDownLatch workStarted = new CountDownLatch(1);
        CountDownLatch finishWork = new CountDownLatch(1);
        AtomicReference<Lease> seen = new AtomicReference<>();
        CompletableFuture<Optional<Boolean>> result = CompletableFuture.supplyAsync(() -> {
            try {
                return client.withLock("job", TTL, Duration.ZERO, lease -> {
                    seen.set(lease);
                    workStarted.countDown();
                    finishWork.await();
                    return lease.isValid();
                });
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, workers);
        workStarted.await();
        // Someone takes the lock over behind our back (an operator, a split brain): the next renewal finds it gone.
        memory.release(seen.get().key(), seen.get().lockId());
        Lease thief = client.tryAcquire("job", TTL).orElseThrow();
        time.advance(Duration.ofSeconds(10));
        assertThat(events).containsExactly("lost job");
        assertThat(seen.get().isValid()).isFalse();
        assertThat(seen.get().isLost()).isTrue();
        finishWork.countDown();
        assertThat(result.get()).contains(false);
        assertThat(client.lookup("job")).map(LockInfo::fence).as("the thief keeps its lock").contains(thief.fence());
    }

    @Test
    void withLockReportsLossWhenRenewalsFailUntilTheDeadline() throws Exception {
        CountDownLatch workStarted = new CountDownLatch(1);
        CountDownLatch finishWork = new CountDownLatch(1);
        CompletableFuture<Optional<String>> result = CompletableFuture.supplyAsync(() -> {
            try {
                return client.withLock("job", TTL, Duration.ZERO, lease -> {
                    workStarted.countDown();
                    finishWork.await();
                    return "done";
                });
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, workers);
        workStarted.await();
        backend.failExtend = true;
        time.advance(Duration.ofSeconds(30)); // renewals at 10 s, then retries sooner, until the deadline at 30 s
        assertThat(events.getLast()).isEqualTo("lost job after FenceGuardException");
        assertThat(events.subList(0, events.size() - 1)).isNotEmpty().containsOnly("renew failed job");
        finishWork.countDown();
        assertThat(result.get()).contains("done");
    }

    @Test
    void aHungRenewalIsDeclaredLostAtTheDeadlineAndItsLateAnswerRevivesNothing() throws Exception {
        CountDownLatch workStarted = new CountDownLatch(1);
        CountDownLatch finishWork = new CountDownLatch(1);
        AtomicReference<Lease> seen = new AtomicReference<>();
        CompletableFuture<Optional<String>> result = CompletableFuture.supplyAsync(() -> {
            try {
                return client.withLock("job", TTL, Duration.ZERO, lease -> {
                    seen.set(lease);
                    workStarted.countDown();
                    finishWork.await();
                    return "done";
                });
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, workers);
        workStarted.await();
        backend.hangExtend = true;
        time.advance(Duration.ofSeconds(10)); // the renewal is sent and never answers
        assertThat(events).isEmpty();
        assertThat(seen.get().isLost()).isFalse();
        time.advance(Duration.ofSeconds(20).minusMillis(1));
        assertThat(seen.get().isLost()).as("still inside the deadline").isFalse();
        time.advance(Duration.ofMillis(1)); // the local deadline, 30 s after the acquire was sent
        assertThat(seen.get().isLost()).isTrue();
        assertThat(events).contains("lost job after FenceGuardException");
        backend.hangExtend = false;
        // The server answers at last (the in-memory backend has expired the lease by now; extend on a real
        // server could still succeed): the lease stays lost either way.
        backend.answerHungCalls();
        assertThat(seen.get().isLost()).isTrue();
        assertThat(seen.get().isValid()).isFalse();
        finishWork.countDown();
        assertThat(result.get()).contains("done");
    }

    @Test
    void aLateSuccessfulExtensionIsUndoneNotRevived() {
        Lease lease = client.tryAcquire("job", TTL).orElseThrow();
        backend.hangExtend = true;
        CompletableFuture<Boolean> extending = client.async().extend(lease, TTL).toCompletableFuture();
        time.advance(Duration.ofSeconds(29)); // the call is bounded by the 30 s the lease has left
        assertThat(extending).isNotDone();
        // The server extends the lock while the lease still lives there, but the answer is held up.
        memory.extend(lease.key(), lease.lockId(), TTL);
        time.advance(Duration.ofSeconds(1));
        assertThat(extending).isCompletedExceptionally();
        assertThat(lease.isValid()).isFalse();
        assertThat(events).containsExactly("renew failed job", "lost job after FenceGuardException");
        assertThat(lease.isLost()).isTrue();
        backend.hangExtend = false;
        backend.answerHungCalls(); // late success: the server kept the lock alive for a lease we gave up
        assertThat(lease.isValid()).as("a late answer never revives a lease").isFalse();
        assertThat(client.lookup("job")).as("the lock it kept alive is released at once, not left to expire").isEmpty();
        lease.close();
    }

    @Test
    void theReleaseAtTheEndOfWithLockIsBoundedWhenTheBackendHangs() throws Exception {
        backend.hangRelease = true;
        CompletableFuture<Optional<String>> result = CompletableFuture.supplyAsync(() -> {
            try {
                return client.withLock("job", TTL, Duration.ZERO, lease -> "done");
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, workers);
        awaitCalls("release job", 1);
        assertThat(result).isNotDone();
        time.advance(Duration.ofSeconds(2)); // the default release timeout
        assertThat(result.get()).contains("done");
        assertThat(events).containsExactly("release failed job");
    }

    @Test
    void withLockReturnsEmptyWhenHeldAndReleasesWhenWorkThrows() throws Exception {
        Lease holder = client.tryAcquire("job", TTL).orElseThrow();
        assertThat(client.withLock("job", TTL, Duration.ZERO, lease -> "never")).isEmpty();
        holder.close();
        assertThatThrownBy(() -> client.withLock("job", TTL, Duration.ZERO, lease -> {
            throw new java.io.IOException("disk full");
        })).isInstanceOf(java.io.IOException.class);
        assertThat(client.lookup("job")).isEmpty();
        assertThatThrownBy(() -> client.withLock("job", TTL, Duration.ZERO, lease -> null))
                .isInstanceOf(NullPointerException.class).hasMessage("withLock work must not return null");
    }

    private void awaitCalls(String call, int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (backend.calls.stream().filter(call::equals).count() < count) {
            assertThat(System.nanoTime()).as("waiting for %d x '%s' in %s", count, call, backend.calls).isLessThan(deadline);
            Thread.sleep(1);
        }
    }

    private void awaitEvent(String event) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!events.contains(event)) {
            assertThat(System.nanoTime()).as("waiting for '%s' in %s", event, events).isLessThan(deadline);
            Thread.sleep(1);
        }
    }

    private record RecordingMetrics(List<String> seen) implements LockMetrics {
        @Override
        public void acquireAttempt(String backend, AcquireOutcome outcome, Duration latency) {}

        @Override
        public void held(String backend, Duration holdTime) {}

        @Override
        public void renewFailed(String backend) {}

        @Override
        public void highFence(String backend) {
            seen.add("high " + backend);
        }

        @Override
        public void staleWriteRejected(String resourceType) {}
    }
}
