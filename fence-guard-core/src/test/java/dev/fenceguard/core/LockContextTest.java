package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.internal.ManualClock;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60) // a guard against a hang, not a timing assertion
class LockContextTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    private final ManualClock time = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final InMemoryLockBackend memory = new InMemoryLockBackend(time);
    private final LockClient client = LockClient.builder(memory).withTimeSource(time).withMetrics(LockMetrics.none()).build();

    @Test
    void insideWithLockTheLeaseIsAvailableToCodeItCallsAndNestedCallsStack() throws Exception {
        assertThat(LockContext.current()).isEmpty();
        client.withLock("orders:1", TTL, Duration.ZERO, outer -> {
            assertThat(LockContext.current()).containsSame(outer);
            assertThat(LockContext.requireHeld("orders:1")).isSameAs(outer);
            client.withLock("payments:1", TTL, Duration.ZERO, inner -> {
                assertThat(LockContext.current()).as("the innermost").containsSame(inner);
                assertThat(LockContext.requireHeld("orders:1")).isSameAs(outer);
                assertThat(LockContext.requireHeld("payments:1")).isSameAs(inner);
                return "inner";
            });
            assertThat(LockContext.current()).containsSame(outer);
            assertThat(LockContext.current("payments:1")).isEmpty();
            return "outer";
        });
        assertThat(LockContext.current()).isEmpty();
    }

    @Test
    void requireHeldOutsideWithLockSaysWhatRunsAndWhere() throws Exception {
        String thread = Thread.currentThread().getName();
        assertThatThrownBy(() -> LockContext.requireHeld("orders:1"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("this code must run inside withLock on 'orders:1', but no withLock runs on thread '" + thread
                        + "' (the context is per thread: work handed to another thread or executor must be given the lease)");
        client.withLock("orders:2", TTL, Duration.ZERO, lease -> {
            assertThatThrownBy(() -> LockContext.requireHeld("orders:1"))
                    .hasMessageStartingWith("this code must run inside withLock on 'orders:1', but only withLock on 'orders:2' runs");
            return "done";
        });
        assertThatThrownBy(() -> LockContext.requireHeld("")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theContextEndsWithTheWorkHoweverItEnds() {
        assertThatThrownBy(() -> client.withLock("orders:1", TTL, Duration.ZERO, lease -> {
            throw new IllegalStateException("the work failed");
        })).hasMessage("the work failed");
        assertThat(LockContext.current()).isEmpty();
    }

    @Test
    void requireHeldRefusesALeaseThatWasLostWhileTheWorkRan() throws Exception {
        client.withLock("orders:1", TTL, Duration.ZERO, lease -> {
            memory.release(lease.key(), lease.lockId()); // taken over behind the holder's back
            time.advance(Duration.ofSeconds(10)); // the renewal finds it gone
            assertThat(LockContext.current("orders:1")).as("still the context, lost or not").containsSame(lease);
            assertThatThrownBy(() -> LockContext.requireHeld("orders:1")).isInstanceOf(IllegalStateException.class)
                    .hasMessage("the lease on 'orders:1' is no longer valid (lost, fence 1): stop writing under it");
            return "done";
        });
    }

    @Test
    void threadsExecutorsAndVirtualThreadsStartedByTheWorkSeeNoLease() throws Exception {
        Map<String, Optional<Lease>> seen = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            client.withLock("orders:1", TTL, Duration.ZERO, lease -> {
                Thread platform = Thread.ofPlatform().start(() -> seen.put("platform thread", LockContext.current()));
                Thread virtual = Thread.ofVirtual().start(() -> seen.put("virtual thread", LockContext.current()));
                Future<?> task = pool.submit(() -> seen.put("executor task", LockContext.current()));
                CompletableFuture.runAsync(() -> seen.put("common pool", LockContext.current())).join();
                platform.join();
                virtual.join();
                task.get();
                return "done";
            });
            // A pooled thread that ran a withLock carries nothing into its next task.
            pool.submit(() -> client.withLock("orders:2", TTL, Duration.ZERO, lease -> "done")).get();
            pool.submit(() -> seen.put("next task on a pooled thread", LockContext.current())).get();
        } finally {
            pool.shutdownNow();
        }
        assertThat(seen).containsOnlyKeys("platform thread", "virtual thread", "executor task", "common pool",
                "next task on a pooled thread").allSatisfy((where, lease) -> assertThat(lease).as(where).isEmpty());
    }

    @Test
    void virtualThreadsInWithLockAtOnceEachSeeTheirOwnLease() throws Exception {
        CountDownLatch bothInside = new CountDownLatch(2);
        Map<String, Object> seen = new ConcurrentHashMap<>();
        List<Thread> threads = List.of("orders:1", "orders:2").stream().map(key -> Thread.ofVirtual().start(() -> {
            try {
                client.withLock(key, TTL, Duration.ZERO, lease -> {
                    bothInside.countDown();
                    bothInside.await(); // the other holds its lock now too
                    seen.put(key, LockContext.current().orElseThrow() == lease ? "own lease"
                            : "lease of " + LockContext.current().orElseThrow().key());
                    return "done";
                });
            } catch (InterruptedException | RuntimeException e) {
                seen.put(key, e);
            }
        })).toList();
        for (Thread t : threads) {
            t.join();
        }
        assertThat(seen).containsEntry("orders:1", "own lease").containsEntry("orders:2", "own lease");
    }

    @Test
    void theAsyncFaceSetsTheContextOnlyWhileTheWorkStarts() {
        AtomicReference<Optional<Lease>> whileStarting = new AtomicReference<>();
        CompletableFuture<String> work = new CompletableFuture<>();
        CompletableFuture<Optional<Lease>> later = new CompletableFuture<>();
        CompletableFuture<Optional<String>> result = client.async().withLock("orders:1", TTL, Duration.ZERO, lease -> {
            whileStarting.set(LockContext.current());
            return work.whenComplete((v, e) -> later.complete(LockContext.current()));
        }).toCompletableFuture();
        assertThat(whileStarting.get()).isPresent();
        assertThat(LockContext.current()).as("the caller's thread after the work started").isEmpty();
        work.complete("done");
        assertThat(later.join()).as("a stage completing later").isEmpty();
        assertThat(result).isCompletedWithValue(Optional.of("done"));
    }
}
