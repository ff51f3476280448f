package dev.fenceguard.testkit;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.WriteOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Worker threads increment one counter under one lock with short leases, and some of them stall
 * longer than their lease (a simulated GC) between reading and writing. With a correct fenced
 * resource, every zombie write is refused: no stale write is applied and no update is lost. Faults
 * (a server killed, flushed, a connection cut) can be scheduled at given attempts.
 *
 * <pre>{@code
 * ZombieStorm.Result r = ZombieStorm.builder(locks, "counter:1", myFencedCounter)
 *         .withAttempts(ZombieStorm.attemptsProperty(300))      // -Dfenceguard.storm.attempts=10000 for a soak
 *         .withFault(150, server::restart)
 *         .build().run();
 * System.out.println(r.summary());   // zombie storm: attempts=300 acquired=300 [BLOCKING=150 ASYNC=150] applied=231 rejected-stale=62 stale-applied=0 lost-updates=0 errors=7 [UNAVAILABLE=7] unmapped-errors=0 ...
 * r.requireSafe();
 * }</pre>
 *
 * <p>The storm has a size: the total number of attempts, shared by the workers (each takes the next
 * attempt number when it is free). Workers take turns at the client's {@link Face faces}: by default
 * half acquire and release through the blocking {@link LockClient}, half through its
 * {@link LockClient#async() asynchronous face}, contending for the same lock, so every storm checks
 * both (see {@link Builder#withFaces}). One attempt: acquire the lock (waiting at most the acquire wait);
 * {@link FencedCounter#claim claim} the counter with the lease's fence (so zombies are refused from
 * now on); read it; maybe stall for twice the TTL; write read + 1 with the fence; release. Claiming
 * before reading matters: without it a zombie's write, admitted before the new holder's fence reached
 * the resource, would be overwritten by the new holder's stale read (a lost update that no fence check
 * can see).
 *
 * <p>Errors are counted, never swallowed. A {@link FenceGuardException} (the mapped error every
 * fence-guard operation throws) ends its attempt and is counted by {@link ErrorCode}; a
 * {@link StaleFenceException} (from {@code orThrow()}) counts as a rejection. Anything else is an
 * <em>unmapped</em> error: it makes the result unsafe, and {@link Result#requireSafe()} fails with the
 * first one as its cause. A write that failed may still have been applied (the reply was lost): the
 * lost-update check allows for that.
 *
 * <p>Faults are scheduled by attempt number, not by time, so a fault storm is reproducible: the worker
 * that takes attempt {@code n} first runs every fault scheduled at {@code n}, then makes its attempt;
 * the other workers storm on meanwhile. A fault that throws is an unmapped error.
 *
 * <p><b>Bound.</b> {@link #run()} ends on its own. Each attempt takes at most
 * {@code P = acquireWait + 2 x ttl + 4 x callTimeout} (one acquire, a stall, claim, read, write, and
 * release, each call at most the call timeout), and each worker finishes an attempt at least every
 * {@code P}, so the storm ends within {@code (ceil(attempts / workers) + 1) x P + faults x callTimeout}.
 * The storm enforces that bound: at the deadline it stops handing out attempts, interrupts its workers
 * and reports {@link Result#finished() finished = false} (unsafe). The call timeout is a promise you
 * make about your drivers (configure their timeouts at or below it); the storm cannot cut a call short
 * except by interrupting it.
 *
 * <p>Speed: a stalled holder blocks the lock until its lease expires, about one TTL. The default stall
 * probability keeps that to about 200 TTLs in total whatever the size (see
 * {@link Builder#withStallProbability}), so a 10,000-attempt storm spends seconds, not minutes, stalled.
 *
 * <p>Instances are immutable; {@link #run()} may be called more than once (each run is a new storm).
 *
 * @since 0.1
 */
public final class ZombieStorm {

    /** The system property {@link #attemptsProperty(int)} reads: {@code -Dfenceguard.storm.attempts=10000}. */
    public static final String ATTEMPTS_PROPERTY = "fenceguard.storm.attempts";

    /** The resource under test: a counter whose writes your code fences. */
    public interface FencedCounter {
        /** Records {@code fence} at the counter without changing its value (a fenced write of the fence alone). */
        WriteOutcome claim(FenceToken fence) throws Exception;

        /** The counter's value (0 before the first write). */
        long read() throws Exception;

        /** Writes {@code value} with {@code fence}. */
        WriteOutcome write(long value, FenceToken fence) throws Exception;
    }

    /** Something done to the system under test in the middle of a storm: restart a server, cut connections. */
    @FunctionalInterface
    public interface Fault {
        /** Does it; should finish within the storm's call timeout. */
        void inject() throws Exception;
    }

    /**
     * What happened.
     *
     * @param attempts attempts made (the storm's size, unless it did not finish)
     * @param acquired attempts that got the lock
     * @param acquiredByFace attempts that got the lock, by the face they used (faces the storm did not
     *     use are absent)
     * @param applied increments that were applied (the write answered {@code Applied})
     * @param rejectedStale claims or writes refused as stale
     * @param notFound claims or writes that answered {@code NotFound} (the counter must exist before the storm)
     * @param staleApplied applied writes whose fence was older than one applied before them (must be 0)
     * @param lostUpdates applied increments missing from the final value, or two applied writes of the same
     *     value (must be 0)
     * @param stalls how many workers stalled past their lease
     * @param finalValue the counter at the end
     * @param errors mapped errors ({@link FenceGuardException}) by code; each ended its attempt
     * @param firstErrors the first mapped error of each code, for diagnosis
     * @param unmappedErrors errors of any other type, and faults that threw (must be 0)
     * @param firstUnmappedError the first of those
     * @param faultsRun faults injected
     * @param faultsScheduled faults scheduled
     * @param finished whether the storm ended within its bound (must be true)
     * @param elapsed how long the storm ran
     */
    public record Result(long attempts, long acquired, Map<Face, Long> acquiredByFace, long applied, long rejectedStale, long notFound, long staleApplied,
            long lostUpdates, long stalls, long finalValue, Map<ErrorCode, Long> errors, Map<ErrorCode, FenceGuardException> firstErrors,
            long unmappedErrors,
            Optional<Throwable> firstUnmappedError, int faultsRun, int faultsScheduled, boolean finished, Duration elapsed) {

        /** Copies the maps. */
        public Result {
            EnumMap<Face, Long> byFace = new EnumMap<>(Face.class);
            byFace.putAll(acquiredByFace);
            acquiredByFace = Collections.unmodifiableMap(byFace);
            EnumMap<ErrorCode, Long> copy = new EnumMap<>(ErrorCode.class);
            copy.putAll(errors);
            errors = Collections.unmodifiableMap(copy);
            EnumMap<ErrorCode, FenceGuardException> firsts = new EnumMap<>(ErrorCode.class);
            firsts.putAll(firstErrors);
            firstErrors = Collections.unmodifiableMap(firsts);
        }

        /** Mapped errors in total. */
        public long errorCount() {
            return errors.values().stream().mapToLong(Long::longValue).sum();
        }

        /**
         * One line, e.g. {@code zombie storm: attempts=10000 acquired=10000 [BLOCKING=5000 ASYNC=5000] applied=9712 rejected-stale=251
         * stale-applied=0 lost-updates=0 errors=0 [] unmapped-errors=0 (stalls past the lease=203, faults=0/0,
         * final value=9712, finished in 41.2 s)}.
         */
        public String summary() {
            return "zombie storm: attempts=" + attempts + " acquired=" + acquired + " " + acquiredByFace.toString().replace(", ", " ")
                    .replace('{', '[').replace('}', ']') + " applied=" + applied
                    + " rejected-stale=" + rejectedStale + (notFound > 0 ? " not-found=" + notFound : "")
                    + " stale-applied=" + staleApplied + " lost-updates=" + lostUpdates + " errors=" + errorCount() + " "
                    + errorsText() + " unmapped-errors=" + unmappedErrors + " (stalls past the lease=" + stalls + ", faults="
                    + faultsRun + "/" + faultsScheduled + ", final value=" + finalValue + ", "
                    + (finished ? "finished" : "DID NOT FINISH within its bound, stopped") + " in "
                    + String.format(java.util.Locale.ROOT, "%.1f s", elapsed.toMillis() / 1000.0) + ")";
        }

        private String errorsText() {
            StringBuilder b = new StringBuilder("[");
            errors.forEach((code, n) -> b.append(b.length() > 1 ? " " : "").append(code).append('=').append(n));
            return b.append(']').toString();
        }

        /**
         * Whether no stale write was applied, no update was lost, every error was a mapped
         * {@link FenceGuardException}, every scheduled fault ran, and the storm finished within its bound.
         */
        public boolean isSafe() {
            return staleApplied == 0 && lostUpdates == 0 && unmappedErrors == 0 && finished && faultsRun == faultsScheduled;
        }

        /**
         * Returns this result if {@link #isSafe()}.
         *
         * @throws AssertionError with the {@link #summary()} as message and the first unmapped error, if any, as cause
         */
        public Result requireSafe() {
            if (!isSafe()) {
                throw new AssertionError("the zombie storm was not safe: " + summary(), firstUnmappedError.orElse(null));
            }
            return this;
        }
    }

    private final LockClient locks;
    private final String key;
    private final FencedCounter counter;
    private final int workers;
    private final int attempts;
    private final Duration ttl;
    private final Duration acquireWait;
    private final Duration callTimeout;
    private final double stallProbability;
    private final List<ScheduledFault> faults;
    private final List<Face> faces;

    private record ScheduledFault(int atAttempt, Fault action) {}

    private ZombieStorm(Builder b) {
        this.locks = b.locks;
        this.key = b.key;
        this.counter = b.counter;
        this.workers = b.workers;
        this.attempts = b.attempts;
        this.ttl = b.ttl;
        this.acquireWait = b.acquireWait;
        this.callTimeout = b.callTimeout;
        this.stallProbability = b.stallProbability >= 0 ? b.stallProbability : defaultStallProbability(b.attempts);
        List<ScheduledFault> sorted = new ArrayList<>(b.faults);
        sorted.sort(Comparator.comparingInt(ScheduledFault::atAttempt)); // stable: same-attempt faults keep their order
        this.faults = List.copyOf(sorted);
        this.faces = List.copyOf(b.faces);
    }

    /**
     * A storm on {@code lockKey} against {@code counter}, with the locks of {@code locks}.
     *
     * @throws NullPointerException if any argument is null
     * @throws IllegalArgumentException if {@code lockKey} is not a valid lock key
     */
    public static Builder builder(LockClient locks, String lockKey, FencedCounter counter) {
        return new Builder(locks, lockKey, counter);
    }

    /**
     * The storm size from the system property {@value #ATTEMPTS_PROPERTY}, or {@code defaultAttempts}
     * when it is not set: lets one test run small in CI and as a soak on demand
     * ({@code -Dfenceguard.storm.attempts=10000}).
     *
     * @throws IllegalArgumentException if the property is set but is not a whole number of at least 1,
     *     or {@code defaultAttempts} is less than 1
     */
    public static int attemptsProperty(int defaultAttempts) {
        if (defaultAttempts < 1) {
            throw new IllegalArgumentException("defaultAttempts must be at least 1, was " + defaultAttempts);
        }
        String text = System.getProperty(ATTEMPTS_PROPERTY);
        if (text == null || text.isBlank()) {
            return defaultAttempts;
        }
        try {
            int n = Integer.parseInt(text.trim().replace("_", ""));
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below with the setting's name
        }
        throw new IllegalArgumentException("system property " + ATTEMPTS_PROPERTY + " must be a whole number of attempts "
                + "of at least 1, was '" + text + "'");
    }

    /** The default stall probability for a storm of {@code attempts}: 0.25, or 200 / attempts above 800. */
    static double defaultStallProbability(int attempts) {
        return Math.min(0.25, 200.0 / attempts);
    }

    /** The bound {@link #run()} keeps (see the class comment). */
    public Duration bound() {
        Duration perAttempt = acquireWait.plus(ttl.multipliedBy(2)).plus(callTimeout.multipliedBy(4));
        long rounds = (attempts + workers - 1) / workers + 1;
        return perAttempt.multipliedBy(rounds).plus(callTimeout.multipliedBy(faults.size()));
    }

    /**
     * Runs the storm. Ends within {@link #bound()}; see the class comment.
     *
     * @throws InterruptedException if the calling thread is interrupted (the workers are then stopped)
     * @throws Exception if the final read of the counter fails (then nothing can be judged)
     */
    public Result run() throws Exception {
        Run run = new Run();
        long start = System.nanoTime();
        Duration bound = bound();
        List<Thread> threads = new ArrayList<>();
        CountDownLatch done = new CountDownLatch(workers);
        for (int w = 0; w < workers; w++) {
            Face.Locks face = faces.get(w % faces.size()).over(locks);
            threads.add(Thread.ofPlatform().name("zombie-storm-" + w + "-" + face.face()).daemon().start(() -> {
                try {
                    run.work(face);
                } finally {
                    done.countDown();
                }
            }));
        }
        boolean finished;
        try {
            finished = done.await(bound.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            run.stop.set(true);
            threads.forEach(Thread::interrupt);
            throw e;
        }
        if (!finished) {
            run.stop.set(true);
            threads.forEach(Thread::interrupt);
            done.await(callTimeout.toNanos() + TimeUnit.SECONDS.toNanos(10), TimeUnit.NANOSECONDS);
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        return run.result(counter.read(), finished, elapsed);
    }

    /** The mutable state of one run. */
    private final class Run {
        final AtomicInteger next = new AtomicInteger();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong made = new AtomicLong();
        final AtomicLong acquired = new AtomicLong();
        final Map<Face, AtomicLong> acquiredByFace = new EnumMap<>(Face.class);
        final AtomicLong rejected = new AtomicLong();
        final AtomicLong notFound = new AtomicLong();
        final AtomicLong stalls = new AtomicLong();
        final AtomicLong unmapped = new AtomicLong();
        final AtomicInteger faultsRun = new AtomicInteger();
        final AtomicReference<Throwable> firstUnmapped = new AtomicReference<>();
        final Map<ErrorCode, AtomicLong> errors = new EnumMap<>(ErrorCode.class);
        final Map<ErrorCode, FenceGuardException> firstErrors = new java.util.concurrent.ConcurrentHashMap<>();
        final ConcurrentLinkedQueue<long[]> appliedWrites = new ConcurrentLinkedQueue<>(); // {value written, fence}

        Run() {
            for (ErrorCode code : ErrorCode.values()) {
                errors.put(code, new AtomicLong());
            }
            faces.forEach(f -> acquiredByFace.put(f, new AtomicLong()));
        }

        void work(Face.Locks locks) {
            int n;
            while (!stop.get() && (n = next.incrementAndGet()) <= attempts) {
                for (ScheduledFault f : faults) {
                    if (f.atAttempt() == n) {
                        inject(f);
                    }
                }
                try {
                    attempt(locks);
                } catch (InterruptedException e) {
                    return; // the storm is being stopped
                }
            }
        }

        private void inject(ScheduledFault f) {
            try {
                f.action().inject();
                faultsRun.incrementAndGet();
            } catch (Exception | AssertionError e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                unmapped(new IllegalStateException("the fault scheduled at attempt " + f.atAttempt() + " failed: " + e, e));
            }
        }

        private void attempt(Face.Locks locks) throws InterruptedException {
            made.incrementAndGet();
            Optional<Lease> lease;
            try {
                lease = locks.acquire(key, ttl, acquireWait);
            } catch (FenceGuardException e) {
                mapped(e);
                return;
            } catch (RuntimeException e) {
                unmapped(e);
                return;
            }
            if (lease.isEmpty()) {
                return;
            }
            acquired.incrementAndGet();
            acquiredByFace.get(locks.face()).incrementAndGet();
            Lease held = lease.get();
            try {
                FenceToken fence = held.fence();
                if (!admitted(counter.claim(fence))) {
                    return;
                }
                long value = counter.read();
                if (ThreadLocalRandom.current().nextDouble() < stallProbability) {
                    stalls.incrementAndGet();
                    Thread.sleep(ttl.multipliedBy(2)); // the GC pause: the lease runs out
                }
                if (admitted(counter.write(value + 1, fence))) {
                    appliedWrites.add(new long[] {value + 1, fence.value()});
                }
            } catch (StaleFenceException e) {
                rejected.incrementAndGet();
            } catch (FenceGuardException e) {
                mapped(e);
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                unmapped(e);
            } finally {
                release(locks, held);
            }
        }

        /** Releases through the face that acquired; a failed release is counted like any other error. */
        private void release(Face.Locks locks, Lease held) {
            try {
                locks.release(held);
            } catch (FenceGuardException e) {
                mapped(e);
            } catch (RuntimeException e) {
                unmapped(e);
            }
        }

        private boolean admitted(WriteOutcome outcome) {
            switch (Objects.requireNonNull(outcome, "the counter returned a null outcome")) {
                case WriteOutcome.Applied a -> {
                    return true;
                }
                case WriteOutcome.Stale s -> rejected.incrementAndGet();
                case WriteOutcome.NotFound nf -> notFound.incrementAndGet();
            }
            return false;
        }

        private void mapped(FenceGuardException e) {
            errors.get(e.code()).incrementAndGet();
            firstErrors.putIfAbsent(e.code(), e);
        }

        private void unmapped(Throwable e) {
            unmapped.incrementAndGet();
            firstUnmapped.compareAndSet(null, e);
        }

        Result result(long finalValue, boolean finished, Duration elapsed) {
            List<long[]> ordered = new ArrayList<>(appliedWrites);
            ordered.sort(Comparator.comparingLong(a -> a[0]));
            long staleApplied = 0;
            long duplicates = 0;
            for (int i = 1; i < ordered.size(); i++) {
                if (ordered.get(i)[1] < ordered.get(i - 1)[1]) {
                    staleApplied++;
                }
                if (ordered.get(i)[0] == ordered.get(i - 1)[0]) {
                    duplicates++; // two holders wrote the same value: one increment overwrote the other
                }
            }
            long distinct = ordered.size() - duplicates;
            // A write whose reply was lost may have been applied, so the final value may exceed the
            // applied count; it may never fall below the distinct values written.
            long lost = duplicates + Math.max(0, distinct - finalValue);
            Map<ErrorCode, Long> byCode = new EnumMap<>(ErrorCode.class);
            errors.forEach((code, n) -> {
                if (n.get() > 0) {
                    byCode.put(code, n.get());
                }
            });
            Map<Face, Long> byFace = new EnumMap<>(Face.class);
            acquiredByFace.forEach((face, n) -> byFace.put(face, n.get()));
            return new Result(made.get(), acquired.get(), byFace, ordered.size(), rejected.get(), notFound.get(), staleApplied, lost,
                    stalls.get(), finalValue, byCode, firstErrors, unmapped.get(), Optional.ofNullable(firstUnmapped.get()), faultsRun.get(),
                    faults.size(), finished, elapsed);
        }
    }

    /**
     * Options for a {@link ZombieStorm}. Not thread-safe; {@link #build()} validates and copies, so a
     * builder can be reused.
     */
    public static final class Builder {
        private final LockClient locks;
        private final String key;
        private final FencedCounter counter;
        private int workers = 6;
        private int attempts = 90;
        private Duration ttl = Duration.ofMillis(150);
        private Duration acquireWait = Duration.ofSeconds(10);
        private Duration callTimeout = Duration.ofSeconds(10);
        private double stallProbability = -1; // the size-dependent default
        private final List<ScheduledFault> faults = new ArrayList<>();
        private List<Face> faces = List.of(Face.BLOCKING, Face.ASYNC);

        private Builder(LockClient locks, String key, FencedCounter counter) {
            this.locks = Objects.requireNonNull(locks, "locks");
            this.key = LockKey.of(Objects.requireNonNull(key, "lockKey")).value();
            this.counter = Objects.requireNonNull(counter, "counter");
        }

        /**
         * Worker threads; default 6.
         *
         * @throws IllegalArgumentException if less than 2 or more than 256
         */
        public Builder withWorkers(int workers) {
            if (workers < 2 || workers > 256) {
                throw new IllegalArgumentException("workers must be between 2 and 256 (a storm needs contention), was " + workers);
            }
            this.workers = workers;
            return this;
        }

        /**
         * The storm's size: attempts in total, shared by the workers; default 90.
         *
         * @throws IllegalArgumentException if less than 1
         */
        public Builder withAttempts(int attempts) {
            if (attempts < 1) {
                throw new IllegalArgumentException("attempts must be at least 1, was " + attempts);
            }
            this.attempts = attempts;
            return this;
        }

        /**
         * Lease TTL; a stalling worker sleeps twice this. Default 150 ms.
         *
         * @throws IllegalArgumentException if less than 1 ms or more than 1 minute
         */
        public Builder withTtl(Duration ttl) {
            Objects.requireNonNull(ttl, "ttl");
            if (ttl.compareTo(Duration.ofMillis(1)) < 0 || ttl.compareTo(Duration.ofMinutes(1)) > 0) {
                throw new IllegalArgumentException("ttl must be between 1 ms and 1 minute, was " + ttl);
            }
            this.ttl = ttl;
            return this;
        }

        /**
         * How long one attempt waits for the lock before giving up (the attempt then counts as made, not
         * acquired); default 10 s.
         *
         * @throws IllegalArgumentException if negative or more than 10 minutes
         */
        public Builder withAcquireWait(Duration wait) {
            Objects.requireNonNull(wait, "wait");
            if (wait.isNegative() || wait.compareTo(Duration.ofMinutes(10)) > 0) {
                throw new IllegalArgumentException("acquire wait must be between 0 and 10 minutes, was " + wait);
            }
            this.acquireWait = wait;
            return this;
        }

        /**
         * The longest any one call (to the lock backend, the counter, or a fault) may take; only used for
         * the storm's {@link ZombieStorm#bound() bound}. Configure your drivers' timeouts at or below it.
         * Default 10 s.
         *
         * @throws IllegalArgumentException if less than 1 ms or more than 10 minutes
         */
        public Builder withCallTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.compareTo(Duration.ofMillis(1)) < 0 || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
                throw new IllegalArgumentException("call timeout must be between 1 ms and 10 minutes, was " + timeout);
            }
            this.callTimeout = timeout;
            return this;
        }

        /**
         * Chance that a worker stalls past its lease between reading and writing. A stall blocks the lock
         * for about one TTL, so the default keeps the expected number of stalls at most 200: 0.25 for
         * storms of up to 800 attempts, {@code 200 / attempts} above.
         *
         * @throws IllegalArgumentException if not in [0, 1]
         */
        public Builder withStallProbability(double p) {
            if (!(p >= 0 && p <= 1)) {
                throw new IllegalArgumentException("stall probability must be in [0, 1], was " + p);
            }
            this.stallProbability = p;
            return this;
        }

        /**
         * The faces the workers acquire and release through: worker {@code n} uses
         * {@code faces[n % faces.length]}. Default: both, {@link Face#BLOCKING} and {@link Face#ASYNC}, so
         * half the workers contend through each.
         *
         * @throws IllegalArgumentException if no face is given, or one is given twice
         * @since 0.1
         */
        public Builder withFaces(Face... faces) {
            List<Face> list = List.of(Objects.requireNonNull(faces, "faces"));
            if (list.isEmpty() || list.stream().distinct().count() != list.size()) {
                throw new IllegalArgumentException("faces must name at least one face, each once, was " + list);
            }
            this.faces = list;
            return this;
        }

        /**
         * Runs {@code fault} once, just before attempt number {@code atAttempt} (1-based), on the worker
         * that takes that attempt; the other workers storm on meanwhile. Several faults may share an
         * attempt; they run in the order added.
         *
         * @throws IllegalArgumentException if {@code atAttempt} is less than 1 (a fault beyond the storm's
         *     size is refused by {@link #build()})
         */
        public Builder withFault(int atAttempt, Fault fault) {
            Objects.requireNonNull(fault, "fault");
            if (atAttempt < 1) {
                throw new IllegalArgumentException("a fault's attempt number must be at least 1, was " + atAttempt);
            }
            faults.add(new ScheduledFault(atAttempt, fault));
            return this;
        }

        /**
         * A storm with these settings.
         *
         * @throws IllegalArgumentException if a fault is scheduled beyond the storm's size
         */
        public ZombieStorm build() {
            for (ScheduledFault f : faults) {
                if (f.atAttempt() > attempts) {
                    throw new IllegalArgumentException("a fault is scheduled at attempt " + f.atAttempt()
                            + ", beyond the storm's " + attempts + " attempts");
                }
            }
            return new ZombieStorm(this);
        }
    }
}
