package dev.fenceguard.testkit;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.WriteOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * K workers on real threads increment one counter under one lock with short leases, and some of
 * them stall longer than their lease (a simulated GC) between reading and writing. With a correct
 * fenced resource, every zombie write is refused: no stale write is applied and no update is lost.
 *
 * <pre>{@code
 * ZombieStorm.Result r = ZombieStorm.builder(locks, "counter:1", myFencedCounter).build().run();
 * System.out.println(r.summary());   // zombie storm: attempts=120 applied=97 rejected-stale=23 stale-applied=0 lost-updates=0
 * }</pre>
 *
 * <p>Each worker: acquire the lock; {@link FencedCounter#claim claim} the counter with the lease's
 * fence (so zombies are refused from now on); read it; maybe stall; write read + 1 with the fence.
 * Claiming before reading matters: without it a zombie's write, admitted before the new holder's
 * fence reached the resource, would be overwritten by the new holder's stale read (a lost update that
 * no fence check can see).
 */
public final class ZombieStorm {

    /** The resource under test: a counter whose writes your code fences. */
    public interface FencedCounter {
        /** Records {@code fence} at the counter without changing its value (a fenced write of the fence alone). */
        WriteOutcome claim(FenceToken fence) throws Exception;

        /** The counter's value (0 before the first write). */
        long read() throws Exception;

        /** Writes {@code value} with {@code fence}. */
        WriteOutcome write(long value, FenceToken fence) throws Exception;
    }

    /**
     * What happened.
     *
     * @param attempts lock acquisitions that went on to claim the counter
     * @param applied increments that were applied
     * @param rejectedStale claims or writes refused as stale
     * @param staleApplied applied writes whose fence was older than one applied before them (must be 0)
     * @param lostUpdates applied increments missing from the final value (must be 0)
     * @param stalls how many workers stalled past their lease
     * @param finalValue the counter at the end
     */
    public record Result(long attempts, long applied, long rejectedStale, long staleApplied, long lostUpdates, long stalls,
            long finalValue) {
        /** One line: attempts, applied, rejected-stale, stale-applied, lost updates. */
        public String summary() {
            return "zombie storm: attempts=" + attempts + " applied=" + applied + " rejected-stale=" + rejectedStale
                    + " stale-applied=" + staleApplied + " lost-updates=" + lostUpdates + " (stalls past the lease=" + stalls
                    + ", final value=" + finalValue + ")";
        }

        /** Whether no stale write was applied and no update was lost. */
        public boolean isSafe() {
            return staleApplied == 0 && lostUpdates == 0;
        }
    }

    private final LockClient locks;
    private final String key;
    private final FencedCounter counter;
    private final int workers;
    private final int attemptsPerWorker;
    private final Duration ttl;
    private final double stallProbability;

    private ZombieStorm(Builder b) {
        this.locks = b.locks;
        this.key = b.key;
        this.counter = b.counter;
        this.workers = b.workers;
        this.attemptsPerWorker = b.attemptsPerWorker;
        this.ttl = b.ttl;
        this.stallProbability = b.stallProbability;
    }

    public static Builder builder(LockClient locks, String lockKey, FencedCounter counter) {
        return new Builder(locks, lockKey, counter);
    }

    /** Runs the storm; bounded by workers x attempts, each attempt at most about 2 x TTL. */
    public Result run() throws Exception {
        AtomicLong attempts = new AtomicLong();
        AtomicLong rejected = new AtomicLong();
        AtomicLong stalls = new AtomicLong();
        List<long[]> appliedWrites = Collections.synchronizedList(new ArrayList<>()); // {value written, fence}
        ExecutorService pool = Executors.newFixedThreadPool(workers);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < attemptsPerWorker; i++) {
                        Optional<Lease> acquired = locks.acquire(key, ttl, Duration.ofSeconds(30));
                        if (acquired.isEmpty()) {
                            continue;
                        }
                        try (Lease lease = acquired.get()) {
                            attempts.incrementAndGet();
                            if (!counter.claim(lease.fence()).isApplied()) {
                                rejected.incrementAndGet();
                                continue;
                            }
                            long value = counter.read();
                            if (ThreadLocalRandom.current().nextDouble() < stallProbability) {
                                stalls.incrementAndGet();
                                Thread.sleep(ttl.multipliedBy(2).toMillis()); // the GC pause: the lease runs out
                            }
                            WriteOutcome outcome = counter.write(value + 1, lease.fence());
                            if (outcome.isApplied()) {
                                appliedWrites.add(new long[] {value + 1, lease.fence().value()});
                            } else {
                                rejected.incrementAndGet();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(10, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        long finalValue = counter.read();
        List<long[]> ordered = new ArrayList<>(appliedWrites);
        ordered.sort(Comparator.comparingLong(a -> a[0]));
        long staleApplied = 0;
        for (int i = 1; i < ordered.size(); i++) {
            if (ordered.get(i)[1] < ordered.get(i - 1)[1]) {
                staleApplied++;
            }
        }
        long lost = Math.max(0, ordered.size() - finalValue);
        return new Result(attempts.get(), ordered.size(), rejected.get(), staleApplied, lost, stalls.get(), finalValue);
    }

    /** Options for a {@link ZombieStorm}. */
    public static final class Builder {
        private final LockClient locks;
        private final String key;
        private final FencedCounter counter;
        private int workers = 6;
        private int attemptsPerWorker = 15;
        private Duration ttl = Duration.ofMillis(150);
        private double stallProbability = 0.25;

        private Builder(LockClient locks, String key, FencedCounter counter) {
            this.locks = Objects.requireNonNull(locks, "locks");
            this.key = Objects.requireNonNull(key, "key");
            this.counter = Objects.requireNonNull(counter, "counter");
        }

        /** Worker threads; default 6. */
        public Builder withWorkers(int workers) {
            if (workers < 2) {
                throw new IllegalArgumentException("a storm needs at least 2 workers, was " + workers);
            }
            this.workers = workers;
            return this;
        }

        /** Acquisitions per worker; default 15. */
        public Builder withAttemptsPerWorker(int attempts) {
            if (attempts < 1) {
                throw new IllegalArgumentException("attempts per worker must be at least 1, was " + attempts);
            }
            this.attemptsPerWorker = attempts;
            return this;
        }

        /** Lease TTL; a stalling worker sleeps twice this. Default 150 ms. */
        public Builder withTtl(Duration ttl) {
            this.ttl = Objects.requireNonNull(ttl, "ttl");
            return this;
        }

        /** Chance that a worker stalls past its lease between reading and writing; default 0.25. */
        public Builder withStallProbability(double p) {
            if (!(p >= 0 && p <= 1)) {
                throw new IllegalArgumentException("stall probability must be in [0, 1], was " + p);
            }
            this.stallProbability = p;
            return this;
        }

        public ZombieStorm build() {
            return new ZombieStorm(this);
        }
    }
}
