package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.internal.CapturedLog;
import dev.fenceguard.core.internal.ManualClock;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The lock client's event stream, heard through its public subscribers (the meters, the listener and
 * {@link Lease#whenLost()}): each lease's events in order, a subscriber that throws isolated from the others,
 * and no event lost or doubled when leases end on several threads at once.
 */
class LockEventStreamTest {

    private static final Duration TTL = Duration.ofSeconds(3);

    /** Records every meter call per lock key, in order: the meters hear a key's events as the stream publishes them. */
    static final class Recording implements LockMetrics {
        final Map<String, List<String>> byKey = new ConcurrentHashMap<>();
        /** Thrown by {@link #leaseStarted} when set: a broken meter registry. */
        volatile RuntimeException onStart;
        private final String key;
        private final Recording root;

        Recording() {
            this.root = this;
            this.key = null;
        }

        private Recording(Recording root, String key) {
            this.root = root;
            this.key = key;
        }

        @Override
        public LockMetrics forLock(LockKey k) {
            return new Recording(root, k.value());
        }

        void add(String what) {
            root.byKey.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(what);
        }

        List<String> of(String k) {
            return byKey.getOrDefault(k, List.of());
        }

        @Override
        public void acquireAttempt(String backend, AcquireOutcome outcome, Duration latency) {
            add("attempt " + outcome);
        }

        @Override
        public void held(String backend, Duration holdTime) {
            add("held");
        }

        @Override
        public void renewFailed(String backend) {
            add("renewFailed");
        }

        @Override
        public void highFence(String backend) {
            add("highFence");
        }

        @Override
        public void staleWriteRejected(String resourceType) {
            add("stale");
        }

        @Override
        public void leaseLost(String backend, LossCause cause) {
            add("lost " + cause);
        }

        @Override
        public void leaseStarted(String backend) {
            if (root.onStart != null) {
                throw root.onStart;
            }
            add("started");
        }

        @Override
        public void leaseEnded(String backend) {
            add("ended");
        }
    }

    private final ManualClock time = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final ScriptedBackend backend = new ScriptedBackend(new InMemoryLockBackend(time));
    private final Recording metrics = new Recording();

    @Test
    void aLeasesEventsComeGrantFirstThenItsRenewalFailuresThenItsLossAndNothingAfter() {
        AsyncLockClient locks = LockClient.builder(backend).withTimeSource(time).withMetrics(metrics)
                .onEvents(new LockListener() {
                    @Override
                    public void onRenewFailed(Lease lease, Throwable error) {
                        metrics.byKey.get(lease.key().value()).add("listener renewFailed");
                    }

                    @Override
                    public void onLeaseLost(Lease lease, Throwable cause) {
                        metrics.byKey.get(lease.key().value()).add("listener lost");
                    }
                }).build().async();
        CompletableFuture<String> work = new CompletableFuture<>();
        CompletableFuture<Optional<String>> run = locks.withLock("job", TTL, Duration.ZERO, lease -> {
            lease.whenLost().thenAccept(cause -> metrics.byKey.get("job").add("whenLost " + cause));
            return work;
        }).toCompletableFuture();
        backend.failExtend = true;
        time.advance(TTL); // every renewal fails, until the watchdog declares the lease lost at its deadline
        work.complete("done"); // the work ends after the loss: its release must not end the lease a second time
        assertThat(run).isCompletedWithValue(Optional.of("done"));

        List<String> events = metrics.of("job");
        assertThat(events.getFirst()).isEqualTo("attempt ACQUIRED");
        assertThat(events.get(1)).isEqualTo("started");
        List<String> failures = events.subList(2, events.size() - 6);
        assertThat(failures).as("renewal failures, each heard by the meters, then the listener").isNotEmpty()
                .hasSize(failures.size() / 2 * 2);
        for (int i = 0; i < failures.size(); i += 2) {
            assertThat(failures.subList(i, i + 2)).containsExactly("renewFailed", "listener renewFailed");
        }
        assertThat(events.subList(events.size() - 6, events.size())).as("the loss, last, heard by every subscriber in order")
                .containsExactly("renewFailed", "lost UNREACHABLE", "ended", "held", "listener lost", "whenLost UNREACHABLE");
    }

    @Test
    void aSubscriberThatThrowsIsLoggedAndDoesNotStopTheOthers() {
        AtomicInteger lossesHeard = new AtomicInteger();
        metrics.onStart = new IllegalStateException("meter registry broken");
        AsyncLockClient locks = LockClient.builder(backend).withTimeSource(time).withMetrics(metrics)
                .onEvents(new LockListener() {
                    @Override
                    public void onLeaseLost(Lease lease, Throwable cause) {
                        lossesHeard.incrementAndGet();
                        throw new IllegalStateException("listener bug");
                    }
                }).build().async();
        Lease[] lease = new Lease[1];
        CompletableFuture<LossCause> lost = new CompletableFuture<>();
        String log = CapturedLog.of(() -> {
            lease[0] = locks.tryAcquire("job", TTL).toCompletableFuture().join().orElseThrow();
            lease[0].whenLost().thenAccept(lost::complete);
            backend.delegate.release(lease[0].key(), lease[0].lockId()); // freed behind our back: the next extend finds it gone
            assertThat(locks.extend(lease[0], TTL).toCompletableFuture().join()).isFalse();
        });
        assertThat(lossesHeard).hasValue(1);
        assertThat(lost).as("whenLost, after the throwing listener, still heard the loss").isCompletedWithValue(LossCause.TAKEN_OVER);
        assertThat(metrics.of("job")).as("the meters: the grant up to the throw, then the loss")
                .containsExactly("attempt ACQUIRED", "renewFailed", "lost TAKEN_OVER", "ended", "held");
        assertThat(log).contains("LockMetrics of the lock client on scripted threw on Granted; ignored", "meter registry broken")
                .contains("LockListener of the lock client on scripted threw on Lost; ignored", "listener bug")
                .contains("lost lock 'job'");
    }

    @Test
    void aLeaseReleasedWhileItIsDeclaredLostEndsOnceWithOneOfTheTwo() throws Exception {
        AsyncLockClient locks = LockClient.builder(backend.delegate).withTimeSource(time).withMetrics(metrics).build().async();
        int n = 300;
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            leases.add(locks.tryAcquire("race:" + i, TTL).toCompletableFuture().join().orElseThrow());
        }
        time.advance(TTL.plusSeconds(1)); // past every deadline: an extend declares the lease lost without I/O
        CyclicBarrier bothAtLease = new CyclicBarrier(2);
        Thread loser = Thread.ofPlatform().start(() -> each(leases, bothAtLease, lease -> locks.extend(lease, TTL)));
        Thread releaser = Thread.ofPlatform().start(() -> each(leases, bothAtLease, locks::release));
        loser.join(TimeUnit.MINUTES.toMillis(1));
        releaser.join(TimeUnit.MINUTES.toMillis(1));
        assertThat(loser.isAlive() || releaser.isAlive()).as("both threads finished").isFalse();

        int lost = 0;
        for (int i = 0; i < n; i++) {
            List<String> events = metrics.of("race:" + i);
            assertThat(events.subList(0, 2)).containsExactly("attempt ACQUIRED", "started");
            List<String> end = events.subList(2, events.size());
            if (end.contains("lost EXPIRED")) {
                lost++;
                assertThat(end).as("race:" + i).containsExactly("renewFailed", "lost EXPIRED", "ended", "held");
            } else {
                assertThat(end).as("race:" + i).containsExactly("held", "ended");
            }
        }
        // Which of the two wins each race is up to the threads; that each lease ends exactly once is not.
        System.out.println("of " + n + " leases, " + lost + " were declared lost first and " + (n - lost) + " released first");
    }

    @Test
    void noEventIsLostWhenManyThreadsTakeAndGiveBackTheSameKeysAtOnce() throws Exception {
        LockClient locks = LockClient.builder(new InMemoryLockBackend()).withMetrics(metrics).build();
        int threads = 4;
        int rounds = 500;
        String[] keys = {"shared:a", "shared:b", "shared:c"};
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger acquired = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                for (int r = 0; r < rounds; r++) {
                    Optional<Lease> lease = locks.tryAcquire(keys[(id + r) % keys.length], TTL);
                    if (lease.isPresent()) {
                        acquired.incrementAndGet();
                        lease.get().close();
                    } else {
                        refused.incrementAndGet();
                    }
                }
            }));
        }
        start.countDown();
        for (Thread w : workers) {
            w.join(TimeUnit.MINUTES.toMillis(1));
            assertThat(w.isAlive()).isFalse();
        }
        List<String> all = new ArrayList<>();
        for (String key : keys) {
            all.addAll(metrics.of(key));
        }
        assertThat(acquired.get() + refused.get()).isEqualTo(threads * rounds);
        assertThat(count(all, "attempt ACQUIRED")).isEqualTo(acquired.get());
        assertThat(count(all, "attempt HELD")).isEqualTo(refused.get());
        assertThat(count(all, "started")).isEqualTo(acquired.get());
        assertThat(count(all, "held")).isEqualTo(acquired.get());
        assertThat(count(all, "ended")).isEqualTo(acquired.get());
    }

    private static long count(List<String> events, String what) {
        return events.stream().filter(what::equals).count();
    }

    /** Both threads take the leases in the same order and meet at each one, so that each lease is raced for. */
    private static void each(List<Lease> leases, CyclicBarrier barrier, java.util.function.Consumer<Lease> action) {
        try {
            for (Lease lease : leases) {
                barrier.await(1, TimeUnit.MINUTES);
                action.accept(lease);
            }
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
