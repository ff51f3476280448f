package dev.fenceguard.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.ZombieStorm;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.curator.framework.CuratorFramework;

/** Pieces shared by the ZooKeeper storms. */
final class ZooKeeperStorms {

    /** Lease TTL of the storms: a stalled holder blocks the lock for about this long. */
    static final Duration TTL = Duration.ofMillis(150);

    /** The errors a fault may cause: the lock's and the counter's calls fail while a connection is gone. */
    static final Set<ErrorCode> FAULT_ERRORS = Set.of(ErrorCode.UNAVAILABLE, ErrorCode.TIMEOUT);

    private ZooKeeperStorms() {}

    /** A storm of the given size on {@code backend} (fast retries: a free lock is taken at once). */
    static ZombieStorm.Builder storm(ZooKeeperLockBackend backend, ZombieStorm.FencedCounter counter, int attempts) {
        LockClient locks = LockClient.builder(backend).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(1), Duration.ofMillis(50)).build();
        return ZombieStorm.builder(locks, "counter", counter).withAttempts(attempts).withTtl(TTL)
                .withCallTimeout(Duration.ofSeconds(30));
    }

    /** Prints the result as the other backends' storms do. */
    static ZombieStorm.Result report(String label, ZombieStorm.Result r) {
        System.out.println("STORM zookeeper, " + label + ": " + r.summary());
        r.firstErrors().forEach((code, e) -> System.out.println("  first " + code + ": " + e.getMessage()));
        return r;
    }

    /**
     * The storm's counter: a {@link FencedZnode} at {@code path} on {@code client}'s ensemble, created at 0
     * (a claim must find it), which notes per phase (the faults advance it) how many increments were applied
     * and the lowest and highest fence they carried.
     */
    static final class Counter implements ZombieStorm.FencedCounter {
        private static final int PHASES = 8;

        private final CuratorFramework client;
        private final String path;
        private volatile int phase;
        private final AtomicLongArray applied = new AtomicLongArray(PHASES);
        private final AtomicLong[] lowest = new AtomicLong[PHASES];
        private final AtomicLong[] highest = new AtomicLong[PHASES];
        private final CountDownLatch[] reached = new CountDownLatch[PHASES];

        Counter(CuratorFramework client, String path) {
            this.client = client;
            this.path = path;
            for (int i = 0; i < PHASES; i++) {
                lowest[i] = new AtomicLong(Long.MAX_VALUE);
                highest[i] = new AtomicLong(Long.MIN_VALUE);
                reached[i] = new CountDownLatch(1);
            }
            assertThat(FencedZnode.write(client, path, 0, 0)).isInstanceOf(WriteOutcome.Applied.class);
        }

        /** From now on, applied writes count for phase {@code p} (a fault calls it once it has done its harm). */
        void phase(int p) {
            phase = p;
            reached[p].countDown();
        }

        /**
         * Waits until phase {@code p} began: a fault calls it first, since the storm runs each fault on the worker
         * that takes its attempt, and the previous fault may still be running on another (waiting for a reconnection).
         */
        void after(int p) throws InterruptedException {
            if (!reached[p].await(60, TimeUnit.SECONDS)) {
                throw new AssertionError("phase " + p + " never began: the fault before did not finish");
            }
        }

        long applied(int p) {
            return applied.get(p);
        }

        long lowestFence(int p) {
            return lowest[p].get();
        }

        long highestFence(int p) {
            return highest[p].get();
        }

        @Override
        public WriteOutcome claim(FenceToken fence) {
            return FencedZnode.write(client, path, fence.value());
        }

        @Override
        public long read() {
            return FencedZnode.value(client, path);
        }

        @Override
        public WriteOutcome write(long value, FenceToken fence) {
            int p = phase; // read before the write: a write counted in a phase was sent in it
            WriteOutcome outcome = FencedZnode.write(client, path, fence.value(), value);
            if (outcome instanceof WriteOutcome.Applied) {
                applied.incrementAndGet(p);
                lowest[p].accumulateAndGet(fence.value(), Math::min);
                highest[p].accumulateAndGet(fence.value(), Math::max);
            }
            return outcome;
        }
    }

    /**
     * What every fault storm must show: safe (no stale write applied, no update lost, every error mapped,
     * every fault run, finished in its bound), errors only of the kinds a lost connection causes, writes
     * applied before the first fault and after the last, and no fence after the last fault below one before the first.
     */
    static void requireSafeThroughFaults(ZombieStorm.Result r, Counter counter, int faults, int lastPhase) {
        r.requireSafe();
        assertThat(r.faultsRun()).isEqualTo(faults);
        assertThat(r.errors().keySet()).as("errors of a lost connection only: %s", r.firstErrors()).isSubsetOf(FAULT_ERRORS);
        assertThat(counter.applied(0)).as("writes applied before the first fault").isPositive();
        assertThat(counter.applied(lastPhase)).as("writes applied after the last fault").isPositive();
        assertThat(counter.lowestFence(lastPhase)).as("fences after the faults, against the highest before")
                .isGreaterThanOrEqualTo(counter.highestFence(0));
        assertThat(r.stalls()).as("zombies were made").isPositive();
    }
}
