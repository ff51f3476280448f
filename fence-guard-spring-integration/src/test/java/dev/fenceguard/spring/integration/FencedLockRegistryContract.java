package dev.fenceguard.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.ManualTimeSource;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.AbstractCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * The contract of {@link FencedLockRegistry} on a real store, as Spring's {@code Lock} and {@code DistributedLock}
 * Javadoc and Spring Integration's registry documentation state it: tryLock with and without a wait, interrupts,
 * reentrancy, unlock by a thread that does not hold the lock, expiry, renewal; {@code LockRegistryLeaderInitiator}
 * handing leadership over with rising terms; and a zombie whose fenced write is stale. Each registry stands for
 * one process (its own lock client). Threads are ordered by latches and by the locks themselves; real time passes
 * only for a short lease to run out in the store, and the test waits for that by taking the lock, never by sleeping.
 */
@Timeout(120) // a guard against a hang, not a timing assertion
abstract class FencedLockRegistryContract {

    /** How long a test waits for another thread or an event: a guard against a hang, never expected to run out. */
    static final long GUARD_SECONDS = 60;

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<LockRegistryLeaderInitiator> initiators = new ArrayList<>();
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    /** A backend on the store under test, shared by the registries of a test (each has its own client). */
    protected abstract LockBackend backend();

    /** A fenced write of {@code fence} to {@code resource} on the store under test, creating it when absent. */
    protected abstract WriteOutcome write(String resource, FenceToken fence);

    @AfterEach
    void stopThreads() {
        initiators.forEach(LockRegistryLeaderInitiator::stop);
        threads.shutdownNow();
    }

    String key(String name) {
        return "si:" + name + ":" + run;
    }

    LockClient client(LockBackend backend) {
        return LockClient.builder(backend).withBackoff(Duration.ofMillis(5), Duration.ofMillis(50)).build();
    }

    /** One process: its own lock client and registry. */
    FencedLockRegistry registry(Duration ttl) {
        return FencedLockRegistry.builder(client(backend())).withTtl(ttl).build();
    }

    FencedLockRegistry registry() {
        return registry(Duration.ofSeconds(30));
    }

    <T> Future<T> onAnotherThread(Callable<T> task) {
        return threads.submit(task);
    }

    /** What {@code action} throws when run on another thread, or null. */
    Throwable failureOnAnotherThread(Runnable action) throws Exception {
        return await(onAnotherThread(() -> {
            try {
                action.run();
                return null;
            } catch (RuntimeException e) {
                return e;
            }
        }));
    }

    static <T> T await(Future<T> f) throws Exception {
        return f.get(GUARD_SECONDS, TimeUnit.SECONDS);
    }

    static void await(CountDownLatch latch) throws InterruptedException {
        assertThat(latch.await(GUARD_SECONDS, TimeUnit.SECONDS)).as("latch").isTrue();
    }

    // --- locking, fences, reentrancy ---

    @Test
    void theHoldingThreadReadsTheFenceOfItsLease() {
        FencedLockRegistry registry = registry();
        FencedDistributedLock lock = registry.obtain(key("fence"));
        lock.lock();
        Lease lease = lock.lease();
        assertThat(lease.isValid()).isTrue();
        assertThat(lock.fence()).isEqualTo(lease.fence());
        assertThat(lease.key().value()).isEqualTo(lock.key());
        lock.unlock();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(lock::fence).isInstanceOf(IllegalStateException.class).hasMessageContaining("not held by this thread");
        lock.lock();
        assertThat(lock.fence().value()).as("a new lease, a greater fence").isGreaterThan(lease.fence().value());
        lock.unlock();
    }

    @Test
    void lockingAgainOnTheHoldingThreadKeepsTheLeaseAndCountsHolds() throws Exception {
        String key = key("reentrant");
        FencedDistributedLock lock = registry().obtain(key);
        FencedDistributedLock elsewhere = registry().obtain(key);
        lock.lock();
        Lease first = lock.lease();
        assertThat(lock.tryLock()).isTrue();
        assertThat(lock.tryLock(1, TimeUnit.SECONDS)).isTrue();
        lock.lockInterruptibly();
        lock.lock(Duration.ofSeconds(20));
        assertThat(lock.getHoldCount()).isEqualTo(5);
        assertThat(lock.lease()).isSameAs(first);
        assertThat(lock.fence()).isEqualTo(first.fence());
        for (int i = 0; i < 4; i++) {
            lock.unlock();
        }
        assertThat(lock.getHoldCount()).isEqualTo(1);
        assertThat(first.isValid()).as("released only by the last unlock").isTrue();
        assertThat(elsewhere.tryLock()).isFalse();
        lock.unlock();
        assertThat(first.isValid()).isFalse();
        assertThat(elsewhere.tryLock()).isTrue();
        assertThat(elsewhere.fence().value()).isGreaterThan(first.fence().value());
        elsewhere.unlock();
    }

    @Test
    void tryLockWithoutAWaitFailsAtOnceWhileAnotherThreadOrProcessHoldsTheLock() throws Exception {
        String key = key("trylock");
        FencedLockRegistry registry = registry();
        FencedDistributedLock lock = registry.obtain(key);
        lock.lock();
        assertThat(await(onAnotherThread(() -> registry.obtain(key).tryLock()))).as("another thread of this process").isFalse();
        FencedDistributedLock elsewhere = registry().obtain(key);
        assertThat(elsewhere.tryLock()).as("another process").isFalse();
        assertThat(elsewhere.isHeldByCurrentThread()).isFalse();
        lock.unlock();
    }

    @Test
    void tryLockWithAWaitGetsTheLockOnceTheHolderUnlocks() throws Exception {
        String key = key("trylock-wait");
        FencedLockRegistry registry = registry();
        FencedDistributedLock lock = registry.obtain(key);
        lock.lock();
        FenceToken first = lock.fence();
        CountDownLatch waiting = new CountDownLatch(2);
        Future<FenceToken> sameProcess = onAnotherThread(() -> takeAndRelease(registry.obtain(key), waiting));
        Future<FenceToken> otherProcess = onAnotherThread(() -> takeAndRelease(registry().obtain(key), waiting));
        await(waiting);
        lock.unlock();
        FenceToken a = await(sameProcess);
        FenceToken b = await(otherProcess);
        assertThat(a.value()).isGreaterThan(first.value());
        assertThat(b.value()).isGreaterThan(first.value()).isNotEqualTo(a.value());
    }

    private static FenceToken takeAndRelease(FencedDistributedLock lock, CountDownLatch waiting) throws InterruptedException {
        waiting.countDown();
        assertThat(lock.tryLock(GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
        FenceToken fence = lock.fence();
        lock.unlock();
        return fence;
    }

    @Test
    void tryLockWhoseWaitRunsOutReturnsFalseHoldingNothing() throws Exception {
        String key = key("trylock-timeout");
        FencedLockRegistry registry = registry();
        FencedDistributedLock lock = registry.obtain(key);
        lock.lock();
        assertThat(await(onAnotherThread(() -> {
            FencedDistributedLock same = registry.obtain(key);
            boolean got = same.tryLock(100, TimeUnit.MILLISECONDS);
            return got || same.isHeldByCurrentThread();
        }))).as("another thread of this process").isFalse();
        FencedDistributedLock elsewhere = registry().obtain(key);
        assertThat(elsewhere.tryLock(Duration.ofMillis(200), Duration.ofSeconds(30))).as("another process").isFalse();
        assertThat(elsewhere.isHeldByCurrentThread()).isFalse();
        lock.unlock();
        assertThat(elsewhere.tryLock(Duration.ZERO, Duration.ofSeconds(30))).as("a zero wait is one attempt").isTrue();
        elsewhere.unlock();
    }

    @Test
    void lockInterruptiblyAndTimedTryLockEndWithInterruptedExceptionHoldingNothing() throws Exception {
        String key = key("interrupt");
        Duration ttl = Duration.ofMinutes(5); // far longer than the guard: a grant left behind would outlast it
        FencedLockRegistry registry = registry(ttl);
        FencedDistributedLock lock = registry.obtain(key);
        lock.lock();
        List<Callable<Object>> waits = List.of(
                () -> { registry.obtain(key).lockInterruptibly(); return "locked"; },          // queues locally
                () -> { registry(ttl).obtain(key).lockInterruptibly(); return "locked"; },     // waits for the store
                () -> registry(ttl).obtain(key).tryLock(GUARD_SECONDS, TimeUnit.SECONDS));
        for (Callable<Object> wait : waits) {
            CountDownLatch entered = new CountDownLatch(1);
            AtomicReference<Thread> waiter = new AtomicReference<>();
            Future<Object> outcome = onAnotherThread(() -> {
                waiter.set(Thread.currentThread());
                entered.countDown();
                try {
                    return wait.call();
                } catch (InterruptedException e) {
                    return e;
                }
            });
            await(entered);
            waiter.get().interrupt();
            assertThat(await(outcome)).isInstanceOf(InterruptedException.class);
        }
        assertThat(lock.getHoldCount()).isEqualTo(1);
        lock.unlock();
        // An acquire that was in flight when its waiter was interrupted may still be granted by the store: the
        // client releases such a late grant when it arrives, so the lock is free soon, not necessarily at once.
        FencedDistributedLock again = registry(ttl).obtain(key);
        assertThat(again.tryLock(GUARD_SECONDS, TimeUnit.SECONDS)).as("no waiter left a hold or a lease behind").isTrue();
        again.unlock();
    }

    @Test
    void lockIsNotInterruptibleAndKeepsTheInterrupt() throws Exception {
        String key = key("uninterruptible");
        FencedDistributedLock lock = registry().obtain(key);
        lock.lock();
        CountDownLatch entered = new CountDownLatch(1);
        AtomicReference<Thread> waiter = new AtomicReference<>();
        Future<Boolean> interruptedWhenLocked = onAnotherThread(() -> {
            waiter.set(Thread.currentThread());
            FencedDistributedLock elsewhere = registry().obtain(key);
            entered.countDown();
            elsewhere.lock();
            boolean interrupted = Thread.interrupted();
            elsewhere.unlock();
            return interrupted;
        });
        await(entered);
        waiter.get().interrupt();
        lock.unlock();
        assertThat(await(interruptedWhenLocked)).isTrue();
    }

    @Test
    void unlockByAThreadThatDoesNotHoldTheLockFailsAndTheHolderKeepsIt() throws Exception {
        String key = key("not-owner");
        FencedLockRegistry registry = registry();
        FencedDistributedLock lock = registry.obtain(key);
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class).hasMessageContaining("not held by this thread");
        lock.lock();
        assertThat(failureOnAnotherThread(() -> registry.obtain(key).unlock())).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot unlock it");
        assertThat(failureOnAnotherThread(() -> registry.obtain(key).fence())).isInstanceOf(IllegalStateException.class);
        assertThat(lock.lease().isValid()).isTrue();
        assertThat(registry().obtain(key).tryLock()).isFalse();
        lock.unlock();
    }

    @Test
    void executeLockedRunsUnderTheLockAndTheTaskReadsTheFence() throws Exception {
        String key = key("execute");
        FencedLockRegistry registry = registry();
        FenceToken fence = registry.executeLocked(key, () -> registry.obtain(key).fence());
        assertThat(fence.value()).isPositive();
        assertThat(registry.obtain(key).isHeldByCurrentThread()).isFalse();
        FencedDistributedLock elsewhere = registry().obtain(key);
        assertThat(elsewhere.tryLock()).isTrue();
        elsewhere.unlock();
    }

    @Test
    void conditionsAreNotSupported() {
        assertThatThrownBy(() -> registry().obtain(key("condition")).newCondition()).isInstanceOf(UnsupportedOperationException.class);
    }

    // --- expiry and renewal ---

    @Test
    void aLeaseThatRanOutIsTakenOverAndTheOldHolderIsToldOnLockingAgainRenewingAndUnlocking() throws Exception {
        String key = key("expired");
        FencedLockRegistry mine = registry();
        FencedDistributedLock lock = mine.obtain(key);
        lock.lock(Duration.ofMillis(300));
        FenceToken old = lock.fence();
        FencedDistributedLock successor = registry().obtain(key);
        successor.lock(); // returns once the store has let the first lease expire
        assertThat(successor.fence().value()).isGreaterThan(old.value());

        assertThatThrownBy(lock::tryLock).isInstanceOf(ConcurrentModificationException.class).hasMessageContaining("is lost");
        assertThat(lock.getHoldCount()).as("a failed reentry takes no hold").isEqualTo(1);
        assertThat(lock.lease().isLost()).isTrue();
        assertThatThrownBy(() -> mine.renewLock(key)).isInstanceOf(IllegalStateException.class).hasMessageContaining("could not renew");
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("no longer held in the store");
        assertThat(lock.isHeldByCurrentThread()).as("free locally all the same").isFalse();
        assertThat(successor.lease().isValid()).isTrue();
        successor.unlock();
    }

    @Test
    void aLeasePastItsLocalDeadlineThatTheStoreStillHadIsReleasedWithoutComplaint() {
        ManualTimeSource time = new ManualTimeSource(Instant.parse("2026-01-01T00:00:00Z"));
        LockClient client = LockClient.builder(backend()).withTimeSource(time).build();
        String key = key("local-deadline");
        FencedDistributedLock lock = FencedLockRegistry.builder(client).build().obtain(key);
        lock.lock(Duration.ofSeconds(30)); // the store's clock gives it 30 s of real time
        time.advance(Duration.ofSeconds(31)); // the holder's clock says it is over
        assertThat(lock.lease().isValid()).isFalse();
        assertThatThrownBy(lock::lock).isInstanceOf(ConcurrentModificationException.class);
        lock.unlock(); // the store still had it: nobody else can have taken it
        FencedDistributedLock elsewhere = registry().obtain(key);
        assertThat(elsewhere.tryLock()).isTrue();
        elsewhere.unlock();
    }

    @Test
    void renewLockExtendsTheLeaseOfTheHoldingThreadKeepingItsFence() throws Exception {
        String key = key("renew");
        CountingBackend counting = new CountingBackend(backend());
        FencedLockRegistry registry = FencedLockRegistry.builder(client(counting)).withTtl(Duration.ofSeconds(30)).build();
        FencedDistributedLock lock = registry.obtain(key);
        lock.lock(Duration.ofSeconds(5));
        FenceToken fence = lock.fence();
        Instant before = lock.lease().expiresAt();
        registry.renewLock(key, Duration.ofMinutes(5));
        assertThat(lock.lease().expiresAt()).isAfter(before.plus(Duration.ofMinutes(4)));
        registry.renewLock(key);
        assertThat(counting.extends_.get()).isEqualTo(2);
        assertThat(lock.fence()).isEqualTo(fence);
        assertThat(failureOnAnotherThread(() -> registry.renewLock(key))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot renew it");
        lock.unlock();
        assertThatThrownBy(() -> registry.renewLock(key)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aRenewalSchedulerRenewsEachLeaseUntilItIsUnlocked() throws Exception {
        String key = key("scheduler");
        CountingBackend counting = new CountingBackend(backend());
        FencedLockRegistry registry = FencedLockRegistry.builder(client(counting)).build();
        CapturingScheduler scheduler = new CapturingScheduler();
        scheduler.initialize();
        try {
            registry.setRenewalTaskScheduler(scheduler);
            FencedDistributedLock lock = registry.obtain(key);
            lock.lock(Duration.ofSeconds(3));
            assertThat(scheduler.delay).isEqualTo(Duration.ofSeconds(1));
            scheduler.task.run(); // what the scheduler does every second
            scheduler.task.run();
            assertThat(counting.extends_.get()).isEqualTo(2);
            assertThat(lock.lease().isValid()).isTrue();
            lock.unlock();
            assertThat(scheduler.future.isCancelled()).as("no renewal after unlock").isTrue();
        } finally {
            scheduler.shutdown();
        }
    }

    /** Runs nothing by itself: the test runs the renewal task it captured. */
    static final class CapturingScheduler extends ThreadPoolTaskScheduler {
        volatile Runnable task;
        volatile Duration delay;
        volatile ScheduledFuture<?> future;

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Instant startTime, Duration delay) {
            this.task = task;
            this.delay = delay;
            this.future = super.scheduleWithFixedDelay(() -> {}, startTime.plus(Duration.ofDays(1)), Duration.ofDays(1));
            return future;
        }
    }

    // --- the zombie ---

    @Test
    void aZombieWhoseLeaseRanOutWritesWithAStaleFence() throws Exception {
        String key = key("zombie");
        String resource = "resource:" + key;
        FencedDistributedLock zombie = registry().obtain(key);
        zombie.lock(Duration.ofMillis(300));
        FenceToken old = zombie.fence();
        // ... the zombie stalls past its TTL (a GC pause, say) ...
        FencedDistributedLock successor = registry().obtain(key);
        successor.lock(); // had once the store let the zombie's lease expire
        assertThat(write(resource, successor.fence())).isInstanceOf(WriteOutcome.Applied.class);
        // ... the zombie wakes up and writes, with the fence it read before it stalled:
        WriteOutcome late = write(resource, old);
        assertThat(late).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(((WriteOutcome.Stale) late).currentFence()).isEqualTo(successor.fence().value());
        assertThatThrownBy(zombie::unlock).isInstanceOf(ConcurrentModificationException.class);
        successor.unlock();
    }

    // --- many threads in two processes ---

    @Test
    void threadsOfTwoProcessesTakeTurnsAndEachTurnHasAGreaterFence() throws Exception {
        String key = key("turns");
        List<FencedLockRegistry> processes = List.of(registry(), registry());
        int threadsPerProcess = 2;
        int rounds = 10;
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger inside = new AtomicInteger();
        List<Long> fences = new ArrayList<>(); // appended inside the lock: in the order of the turns
        List<Future<Integer>> workers = new ArrayList<>();
        for (FencedLockRegistry process : processes) {
            for (int t = 0; t < threadsPerProcess; t++) {
                workers.add(onAnotherThread(() -> {
                    FencedDistributedLock lock = process.obtain(key);
                    await(start);
                    int overlaps = 0;
                    for (int r = 0; r < rounds; r++) {
                        lock.lock();
                        try {
                            if (inside.incrementAndGet() != 1) {
                                overlaps++;
                            }
                            synchronized (fences) {
                                fences.add(lock.fence().value());
                            }
                            inside.decrementAndGet();
                        } finally {
                            lock.unlock();
                        }
                    }
                    return overlaps;
                }));
            }
        }
        start.countDown();
        for (Future<Integer> w : workers) {
            assertThat(await(w)).as("turns that overlapped another").isZero();
        }
        assertThat(fences).hasSize(processes.size() * threadsPerProcess * rounds);
        for (int i = 1; i < fences.size(); i++) {
            assertThat(fences.get(i)).as("turn %d", i).isGreaterThan(fences.get(i - 1));
        }
    }

    // --- LockRegistryLeaderInitiator ---

    /** A candidate that reads its term from the lock when granted, writes with it, and reports both. */
    final class FencedCandidate extends AbstractCandidate {
        final FencedLockRegistry registry;
        final String resource;
        final BlockingQueue<String> events = new LinkedBlockingQueue<>();
        final CountDownLatch stallFirstTerm;
        volatile FenceToken term;

        FencedCandidate(String id, String role, FencedLockRegistry registry, String resource, CountDownLatch stallFirstTerm) {
            super(id, role);
            this.registry = registry;
            this.resource = resource;
            this.stallFirstTerm = stallFirstTerm;
        }

        @Override
        public void onGranted(Context ctx) throws InterruptedException {
            FenceToken fence = registry.obtain(ctx.getRole()).fence(); // the selector thread holds the lock now
            term = fence;
            events.add("granted " + fence.value());
            if (stallFirstTerm != null && stallFirstTerm.getCount() > 0) {
                stallFirstTerm.await(); // a leader that stalls (its heartbeat stops) before it writes
                stallFirstTerm.countDown();
            }
            WriteOutcome outcome = write(resource, fence);
            events.add((outcome instanceof WriteOutcome.Applied ? "applied " : "stale ") + fence.value());
        }

        @Override
        public void onRevoked(Context ctx) {
            events.add("revoked");
        }

        long next(String kind) throws InterruptedException {
            while (true) {
                String e = events.poll(GUARD_SECONDS, TimeUnit.SECONDS);
                assertThat(e).as(getId() + " waited for '" + kind + "'").isNotNull();
                if (e.startsWith(kind)) {
                    return kind.equals("revoked") ? 0 : Long.parseLong(e.substring(kind.length() + 1));
                }
            }
        }
    }

    LockRegistryLeaderInitiator initiator(FencedCandidate candidate) {
        LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(candidate.registry, candidate);
        initiator.setHeartBeatMillis(100);
        initiator.setBusyWaitMillis(20);
        initiators.add(initiator);
        return initiator;
    }

    @Test
    void leadershipHandsOverWithRisingTerms() throws Exception {
        String role = key("leader");
        String resource = "resource:" + role;
        FencedCandidate a = new FencedCandidate("a", role, registry(Duration.ofSeconds(10)), resource, null);
        FencedCandidate b = new FencedCandidate("b", role, registry(Duration.ofSeconds(10)), resource, null);
        LockRegistryLeaderInitiator leaderA = initiator(a);
        LockRegistryLeaderInitiator leaderB = initiator(b);

        leaderA.start();
        long first = a.next("applied");
        leaderB.start();
        leaderA.stop(); // hands over
        a.next("revoked");
        long second = b.next("applied");
        assertThat(second).isGreaterThan(first);
        assertThat(leaderB.getContext().isLeader()).isTrue();

        leaderA.start();
        leaderB.stop(); // and back
        b.next("revoked");
        long third = a.next("applied");
        assertThat(third).isGreaterThan(second);
        assertThat(write(resource, FenceToken.of(second))).as("the previous leader's term").isInstanceOf(WriteOutcome.Stale.class);
    }

    @Test
    void aLeaderThatStalledPastItsTermIsRevokedAndItsWriteIsStale() throws Exception {
        String role = key("stalled");
        String resource = "resource:" + role;
        CountDownLatch stall = new CountDownLatch(1);
        FencedCandidate a = new FencedCandidate("a", role, registry(Duration.ofMillis(500)), resource, stall);
        FencedCandidate b = new FencedCandidate("b", role, registry(Duration.ofSeconds(10)), resource, null);
        LockRegistryLeaderInitiator leaderA = initiator(a);
        LockRegistryLeaderInitiator leaderB = initiator(b);

        leaderA.start();
        long stalledTerm = a.next("granted"); // and now it stalls: no heartbeat renews its lease
        leaderB.start();
        long successorTerm = b.next("applied"); // once the store let the stalled leader's lease expire
        assertThat(successorTerm).isGreaterThan(stalledTerm);

        stall.countDown(); // the stalled leader wakes up and writes with its old term
        assertThat(a.next("stale")).isEqualTo(stalledTerm);
        a.next("revoked"); // its next heartbeat finds the lease lost
        assertThat(leaderB.getContext().isLeader()).isTrue();
        assertThat(leaderA.getContext().isLeader()).isFalse();
    }
}
