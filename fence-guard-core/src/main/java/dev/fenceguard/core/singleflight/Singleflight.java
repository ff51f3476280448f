package dev.fenceguard.core.singleflight;

import dev.fenceguard.core.AsyncLockClient;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.internal.Redacted;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.FlightStore.FlightResult;
import dev.fenceguard.core.spi.FlightStore.FlightStart;
import dev.fenceguard.core.spi.FlightStore.FlightWatch;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Singleflight across processes: among all callers that ask for the same key at the same time, in any
 * number of processes, one computes and the others get its result.
 *
 * <pre>{@code
 * FenceGuardJdbc jdbc = FenceGuardJdbc.builder(dataSource).build();   // PostgreSQL; close() at shutdown
 * Singleflight flights = Singleflight.builder(lockClient.async(), jdbc.flightStore())
 *         .withMaxWait(Duration.ofSeconds(30))
 *         .build();
 * String report = flights.run("report:2026-11", Duration.ofSeconds(20), ResultCodec.utf8(),
 *         lease -> buildExpensiveReport());
 * }</pre>
 *
 * <p><b>Within one process</b>, concurrent callers of one key share one flight: the first starts it,
 * the others join it and make no round trip of their own; each decodes the shared bytes itself.
 *
 * <p><b>Across processes</b>, a flight is: read the store (a retained result answers at once); else try
 * the flight's lock once. The process that gets it is the <em>leader</em>: it records in the store that
 * a flight with its lease's fence started (unless a result was published meanwhile, which then
 * answers), runs the work while the lock client renews the lease, and publishes the encoded result with
 * its fence. The store applies the publish only if no flight with a greater fence has started since: a
 * leader that stalled past its lease (a zombie) and wakes after a successor began has its result
 * refused, atomically on the server, and its callers get the successor's result instead. The others
 * <em>wait</em>: they listen to the store's notification (PostgreSQL LISTEN/NOTIFY, Redis pub/sub,
 * Firestore snapshot listeners) and, as a fallback, look again at the poll interval and when the
 * leader's lease is due to expire; a waiter that finds the lock free takes over, with a greater fence.
 * Nothing spins: every wake-up is a notification or a timer. A wait ends with {@code TIMEOUT} after the
 * max wait.
 *
 * <p><b>Results are retained</b> for {@link Builder#withRetention the retention} (by the store's
 * clock): a caller that arrives meanwhile gets the retained result without computing. After that, the
 * next caller starts a new flight. Retention is therefore also a short cache; keep it short when results
 * go stale quickly.
 *
 * <p><b>Failures.</b> If the work fails, its error goes to every caller of this process that shared the
 * flight, nothing is published, the lock is released and waiters in other processes are woken to try
 * themselves. If the leader's process dies, waiters take over once its lease has expired. Store and lock
 * errors are {@link FenceGuardException}s with a mapped code.
 *
 * <p>Invalid arguments throw {@link IllegalArgumentException} (or {@link NullPointerException}) before
 * any I/O. Immutable and thread-safe.
 *
 * @since 0.3
 */
public final class Singleflight {

    private static final Logger log = LoggerFactory.getLogger(Singleflight.class);

    /** Shortest wait before looking at a lease that should have expired: the clocks of two hosts differ a little. */
    static final Duration MIN_EXPIRY_WAIT = Duration.ofMillis(10);

    /** Where the blocking face runs work: the caller waits on its own thread meanwhile. */
    private static final Executor WORKERS = task -> Thread.ofVirtual().name("fence-guard-singleflight").start(task);

    private final AsyncLockClient locks;
    private final FlightStore store;
    private final String lockPrefix;
    private final Duration maxWait;
    private final Duration pollInterval;
    private final Duration retention;
    private final Duration storeTimeout;
    private final int maxResultBytes;
    private final SingleflightMetrics metrics;
    private final TimeSource time;
    private final ConcurrentHashMap<LockKey, CompletableFuture<byte[]>> flights = new ConcurrentHashMap<>();

    private Singleflight(Builder b) {
        this.locks = b.locks;
        this.store = b.store;
        this.lockPrefix = b.lockPrefix;
        this.maxWait = b.maxWait;
        this.pollInterval = b.pollInterval;
        this.retention = b.retention;
        this.storeTimeout = b.storeTimeout;
        this.maxResultBytes = b.maxResultBytes;
        this.metrics = b.metrics != null ? b.metrics : SingleflightMetrics.automatic();
        this.time = b.time;
    }

    /**
     * A builder for flights through {@code locks} (whose backend holds the flights' leases) and
     * {@code store} (which keeps fences and results).
     *
     * @throws NullPointerException if either is null
     */
    public static Builder builder(AsyncLockClient locks, FlightStore store) {
        return new Builder(locks, store);
    }

    /** Work computed by a flight's leader; receives the lease, whose fence it may pass to fenced writes. */
    @FunctionalInterface
    public interface FlightWork<T> {
        /** The result; must not be null. */
        T compute(Lease lease) throws Exception;
    }

    /**
     * Runs the flight of {@code key} and waits for its result: computed here with {@code work} (on a
     * virtual thread of its own) if this process leads, or another caller's. An interrupt ends this
     * caller's wait only; the flight goes on for the others.
     *
     * @param key the flight key: any valid lock key (see {@link LockKey#of}) that, after the lock prefix, is still one
     * @param ttl the lease TTL of the leader (renewed while it computes): how soon waiters take over if it dies
     * @return the result
     * @throws IllegalArgumentException if the key or TTL is invalid (before any I/O)
     * @throws FenceGuardException {@code TIMEOUT} if no result came within the max wait; or a store or lock error
     * @throws CompletionException wrapping a checked exception of the work or the codec (unchecked ones are thrown as they are)
     * @throws InterruptedException if interrupted while waiting
     */
    public <T> T run(String key, Duration ttl, ResultCodec<T> codec, FlightWork<T> work) throws InterruptedException {
        Objects.requireNonNull(work, "work");
        CompletableFuture<T> result = runAsync(key, ttl, codec, lease -> CompletableFuture.supplyAsync(() -> {
            try {
                return work.compute(lease);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        }, WORKERS)).toCompletableFuture();
        try {
            return result.get();
        } catch (ExecutionException e) {
            Throwable cause = unwrap(e);
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new CompletionException(cause);
        }
    }

    /**
     * The non-blocking face of {@link #run}: returns at once. {@code work} is called to start the
     * computation if this process leads (on a thread of fence-guard or the store's driver: start the work
     * there, do not do it there); the lease is renewed until its stage completes. Cancelling the returned
     * stage ends this caller's interest only.
     *
     * @return a stage of the result, or of the failure {@link #run} would throw
     * @throws IllegalArgumentException if the key or TTL is invalid (before any I/O)
     */
    public <T> CompletionStage<T> runAsync(String key, Duration ttl, ResultCodec<T> codec,
            Function<? super Lease, ? extends CompletionStage<T>> work) {
        Objects.requireNonNull(codec, "codec");
        Objects.requireNonNull(work, "work");
        LockKey flightKey = LockKey.of(Objects.requireNonNull(key, "key"));
        Checks.ttl(ttl, flightKey);
        LockKey lockKey = lockKeyOf(flightKey);
        CompletableFuture<byte[]> shared = new CompletableFuture<>();
        CompletableFuture<byte[]> existing = flights.putIfAbsent(flightKey, shared);
        if (existing != null) {
            metrics.shared(store.name());
            shared = existing;
        } else {
            CompletableFuture<byte[]> mine = shared;
            mine.whenComplete((v, e) -> flights.remove(flightKey, mine));
            new Flight(flightKey, lockKey, ttl, lease -> encode(flightKey, work.apply(lease), codec), mine).start();
        }
        return shared.thenApply(bytes -> {
            try {
                return codec.decode(bytes);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        });
    }

    /**
     * {@link #run(String, Duration, ResultCodec, FlightWork)} for results that are bytes already
     * ({@link ResultCodec#bytes()}).
     *
     * @throws IllegalArgumentException if the key or TTL is invalid (before any I/O)
     * @throws InterruptedException if interrupted while waiting
     */
    public byte[] run(String key, Duration ttl, FlightWork<byte[]> work) throws InterruptedException {
        return run(key, ttl, ResultCodec.bytes(), work);
    }

    /**
     * {@link #runAsync(String, Duration, ResultCodec, Function)} for results that are bytes already
     * ({@link ResultCodec#bytes()}).
     *
     * @throws IllegalArgumentException if the key or TTL is invalid (before any I/O)
     */
    public CompletionStage<byte[]> runAsync(String key, Duration ttl, Function<? super Lease, ? extends CompletionStage<byte[]>> work) {
        return runAsync(key, ttl, ResultCodec.bytes(), work);
    }

    /** The store this instance keeps flights in. */
    public FlightStore store() {
        return store;
    }

    /** The lock key of {@code key}'s flights: the lock prefix, then the key. */
    public String lockKeyOf(String key) {
        return lockKeyOf(LockKey.of(Objects.requireNonNull(key, "key"))).value();
    }

    @Override
    public String toString() {
        return "Singleflight[" + store.name() + ", lock prefix '" + lockPrefix + "', max wait " + maxWait + ", retention "
                + retention + "]";
    }

    private LockKey lockKeyOf(LockKey key) {
        try {
            return LockKey.of(lockPrefix + key.value());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("flight key with the lock prefix '" + lockPrefix + "' must be a valid lock key: "
                    + e.getMessage(), e);
        }
    }

    private CompletableFuture<byte[]> encode(LockKey key, CompletionStage<?> stage, ResultCodec<?> codec) {
        Objects.requireNonNull(stage, "flight work must not return a null stage");
        @SuppressWarnings("unchecked")
        ResultCodec<Object> c = (ResultCodec<Object>) codec;
        return stage.toCompletableFuture().thenApply(value -> {
            Objects.requireNonNull(value, "flight work must not complete with null");
            byte[] bytes;
            try {
                bytes = Objects.requireNonNull(c.encode(value), "ResultCodec.encode must not return null");
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new CompletionException(e);
            }
            if (bytes.length > maxResultBytes) {
                throw new FenceGuardException(ErrorCode.INVALID_ARGUMENT, key.value(), "the encoded result has " + bytes.length
                        + " bytes, more than maxResultBytes " + maxResultBytes + "; nothing was published");
            }
            return bytes;
        });
    }

    private static Throwable unwrap(Throwable error) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    /** What the leader's turn under the lease came to. */
    private sealed interface Led {
        record Published(byte[] value) implements Led {}

        record Retained(FlightResult result) implements Led {}

        record Superseded(long newest) implements Led {}
    }

    /**
     * One flight of one key in this process: read, lead or wait, until a result or the deadline. All
     * steps are callbacks of store, lock and timer stages; no thread waits.
     */
    private final class Flight {
        private final LockKey key;
        private final LockKey lockKey;
        private final Duration ttl;
        private final Function<Lease, CompletableFuture<byte[]>> work;
        private final CompletableFuture<byte[]> out;
        private volatile long deadline;
        private volatile long waitStart = -1;
        private boolean watchAsked;
        // guarded by this:
        private FlightWatch watch;
        private int pokes;
        private int pokesSeen;
        private Future<?> timer;
        private boolean armed;

        Flight(LockKey key, LockKey lockKey, Duration ttl, Function<Lease, CompletableFuture<byte[]>> work,
                CompletableFuture<byte[]> out) {
            this.key = key;
            this.lockKey = lockKey;
            this.ttl = ttl;
            this.work = work;
            this.out = out;
        }

        void start() {
            deadline = time.nanoTime() + maxWait.toNanos();
            out.whenComplete((v, e) -> stopWaiting());
            attempt();
        }

        private void attempt() {
            if (out.isDone()) {
                return;
            }
            synchronized (this) {
                pokesSeen = pokes;
            }
            store.read(key, storeTimeout).whenComplete((found, error) -> {
                if (error != null) {
                    out.completeExceptionally(unwrap(error));
                } else if (found.isPresent()) {
                    answered(found.get());
                } else {
                    lead();
                }
            });
        }

        private void answered(FlightResult result) {
            if (waitStart >= 0) {
                metrics.waited(store.name(), SingleflightMetrics.WaitOutcome.RESULT, waited());
            } else {
                metrics.retained(store.name());
            }
            out.complete(result.value());
        }

        private void lead() {
            boolean[] held = {false};
            locks.withLock(lockKey.value(), ttl, Duration.ZERO, lease -> {
                held[0] = true;
                return underLease(lease);
            }).whenComplete((led, error) -> {
                if (error != null) {
                    if (held[0]) {
                        metrics.led(store.name(), SingleflightMetrics.LedOutcome.FAILED);
                        wakeOthers(); // after the release: woken waiters find the lock free
                    }
                    out.completeExceptionally(unwrap(error));
                } else if (led.isEmpty()) {
                    waitForOthers(); // held by another process's flight
                } else {
                    switch (led.get()) {
                        case Led.Published p -> {
                            metrics.led(store.name(), SingleflightMetrics.LedOutcome.PUBLISHED);
                            if (waitStart >= 0) {
                                metrics.waited(store.name(), SingleflightMetrics.WaitOutcome.TOOK_OVER, waited());
                            }
                            out.complete(p.value());
                        }
                        case Led.Retained r -> answered(r.result());
                        case Led.Superseded s -> {
                            log.info("singleflight '{}': a newer flight (fence {}) started while this one ran; its result "
                                    + "was not published, waiting for the newer one", key, s.newest());
                            metrics.led(store.name(), SingleflightMetrics.LedOutcome.SUPERSEDED);
                            deadline = time.nanoTime() + maxWait.toNanos(); // a fresh wait: the newer flight only began
                            waitForOthers();
                        }
                    }
                }
            });
        }

        private CompletionStage<Led> underLease(Lease lease) {
            long fence = lease.fence().value();
            return store.begin(key, fence, storeTimeout).thenCompose(start -> switch (start) {
                case FlightStart.Retained r -> CompletableFuture.completedFuture(new Led.Retained(r.result()));
                case FlightStart.Superseded s -> CompletableFuture.completedFuture(new Led.Superseded(s.newest()));
                case FlightStart.Started s -> work.apply(lease).thenCompose(bytes ->
                        store.publish(key, fence, bytes, retention, storeTimeout).thenApply(outcome -> switch (outcome) {
                            case WriteOutcome.Applied a -> (Led) new Led.Published(bytes);
                            case WriteOutcome.Stale st -> new Led.Superseded(st.currentFence());
                            case WriteOutcome.NotFound n -> throw new FenceGuardException(ErrorCode.INTERNAL, key.value(),
                                    "store " + store.name() + " answered NotFound to a publish");
                        }));
            });
        }

        private void waitForOthers() {
            if (out.isDone()) {
                return;
            }
            long now = time.nanoTime();
            if (waitStart < 0) {
                waitStart = now;
            }
            if (deadline - now <= 0) {
                metrics.waited(store.name(), SingleflightMetrics.WaitOutcome.GAVE_UP, waited());
                out.completeExceptionally(new FenceGuardException(ErrorCode.TIMEOUT, key.value(), "no result of the flight "
                        + "within the max wait of " + maxWait + "; the flight of another process is still running"));
                return;
            }
            if (!watchAsked) {
                // First wait: listen, then look again, so that a publish between our read and the listen is not missed.
                watchAsked = true;
                listen().whenComplete((w, error) -> {
                    if (error != null) {
                        log.debug("singleflight '{}': cannot listen ({}); polling every {}", key, Redacted.describe(error), pollInterval);
                    } else {
                        boolean keep;
                        synchronized (this) {
                            keep = !out.isDone();
                            watch = keep ? w : null;
                        }
                        if (!keep) {
                            w.close();
                        }
                    }
                    attempt();
                });
                return;
            }
            locks.lookup(lockKey.value()).whenComplete((info, error) -> sleep(nextLook(info, error)));
        }

        /** The store's watch, bounded by the store timeout: a listen that never takes hold must not stall the flight. */
        private CompletableFuture<FlightWatch> listen() {
            CompletableFuture<FlightWatch> bounded = new CompletableFuture<>();
            Future<?> giveUp = time.schedule(storeTimeout, () -> bounded.completeExceptionally(new FenceGuardException(
                    ErrorCode.TIMEOUT, key.value(), "the store's watch did not take hold within " + storeTimeout)));
            CompletionStage<FlightWatch> listening;
            try {
                listening = store.watch(key, this::poke);
            } catch (RuntimeException e) {
                listening = CompletableFuture.failedFuture(e);
            }
            listening.whenComplete((w, error) -> {
                giveUp.cancel(false);
                if (error != null) {
                    bounded.completeExceptionally(error);
                } else if (!bounded.complete(w)) {
                    w.close(); // took hold after we gave up on it
                }
            });
            return bounded;
        }

        /** The poll interval, or less when the leader's lease expires sooner; zero when the lock is free now. */
        private long nextLook(Optional<LockInfo> info, Throwable error) {
            long delay = pollInterval.toNanos();
            if (error == null) {
                if (info.isEmpty()) {
                    return 0;
                }
                long untilExpiry = Duration.between(time.now(), info.get().expiresAt()).toNanos();
                delay = Math.min(delay, Math.max(untilExpiry, MIN_EXPIRY_WAIT.toNanos()));
            }
            return Math.min(delay, Math.max(0, deadline - time.nanoTime()));
        }

        private void sleep(long nanos) {
            synchronized (this) {
                if (out.isDone()) {
                    return;
                }
                if (pokes == pokesSeen && nanos > 0) {
                    armed = true;
                    timer = time.schedule(Duration.ofNanos(nanos), this::wakeUp);
                    return;
                }
            }
            attemptOrGiveUp(); // notified since the last look, or nothing to wait for
        }

        private void wakeUp() {
            synchronized (this) {
                if (!armed) {
                    return;
                }
                armed = false;
            }
            attemptOrGiveUp();
        }

        /** The store's notification: another flight of the key published or ended. */
        private void poke() {
            Future<?> t;
            synchronized (this) {
                pokes++;
                if (!armed) {
                    return; // not sleeping: the next sleep sees the count and looks again at once
                }
                armed = false;
                t = timer;
            }
            t.cancel(false);
            attemptOrGiveUp();
        }

        private void attemptOrGiveUp() {
            if (deadline - time.nanoTime() <= 0) {
                waitForOthers(); // gives up
            } else {
                attempt();
            }
        }

        private void wakeOthers() {
            store.wake(key, storeTimeout).whenComplete((v, error) -> {
                if (error != null) {
                    log.debug("singleflight '{}': could not wake the waiters ({}); they look again at their poll interval", key,
                            Redacted.describe(error));
                }
            });
        }

        private Duration waited() {
            return Duration.ofNanos(time.nanoTime() - waitStart);
        }

        private void stopWaiting() {
            FlightWatch w;
            Future<?> t;
            synchronized (this) {
                w = watch;
                watch = null;
                t = armed ? timer : null;
                armed = false;
            }
            if (t != null) {
                t.cancel(false);
            }
            if (w != null) {
                w.close();
            }
        }
    }

    /**
     * Options of a {@link Singleflight}. Defaults: max wait 30 s, poll interval 1 s, retention 10 s,
     * store call timeout 5 s, results up to 512 KiB, lock prefix {@code singleflight:},
     * {@link SingleflightMetrics#automatic()}, the system clock. Not thread-safe; {@link #build()} copies.
     *
     * @since 0.3
     */
    public static final class Builder {
        private final AsyncLockClient locks;
        private final FlightStore store;
        private String lockPrefix = "singleflight:";
        private Duration maxWait = Duration.ofSeconds(30);
        private Duration pollInterval = Duration.ofSeconds(1);
        private Duration retention = Duration.ofSeconds(10);
        private Duration storeTimeout = Duration.ofSeconds(5);
        private int maxResultBytes = 512 * 1024;
        private SingleflightMetrics metrics;
        private TimeSource time = TimeSource.system();

        private Builder(AsyncLockClient locks, FlightStore store) {
            this.locks = Objects.requireNonNull(locks, "locks");
            this.store = Objects.requireNonNull(store, "store");
        }

        /**
         * How long a caller waits for another process's flight before it gives up with {@code TIMEOUT};
         * zero means "only take a retained result or lead".
         *
         * @throws IllegalArgumentException if negative or above 365 days
         */
        public Builder withMaxWait(Duration maxWait) {
            this.maxWait = Checks.maxWait(maxWait, "singleflight");
            return this;
        }

        /**
         * How often a waiter looks again when no notification comes (the fallback when notifications are
         * lost or the store cannot listen). Waiters also look when the leader's lease is due to expire.
         *
         * @throws IllegalArgumentException if not between 1 ms and 1 day
         */
        public Builder withPollInterval(Duration interval) {
            this.pollInterval = between("pollInterval", interval, Duration.ofMillis(1), Duration.ofDays(1));
            return this;
        }

        /**
         * How long a published result is kept and served to new callers (by the store's clock); whole
         * milliseconds.
         *
         * @throws IllegalArgumentException if not whole milliseconds between 1 ms and 30 days
         */
        public Builder withRetention(Duration retention) {
            between("retention", retention, Duration.ofMillis(1), Checks.MAX_TTL);
            if (retention.getNano() % 1_000_000 != 0) {
                throw new IllegalArgumentException("retention must be a whole number of milliseconds, was " + retention);
            }
            this.retention = retention;
            return this;
        }

        /**
         * The timeout of each store call.
         *
         * @throws IllegalArgumentException if not between 1 ms and 10 minutes
         */
        public Builder withStoreTimeout(Duration timeout) {
            this.storeTimeout = between("storeTimeout", timeout, Duration.ofMillis(1), Duration.ofMinutes(10));
            return this;
        }

        /**
         * The largest encoded result published; a larger one fails the flight with
         * {@code INVALID_ARGUMENT}. Firestore documents hold at most 1 MiB.
         *
         * @throws IllegalArgumentException if not between 1 and 64 MiB
         */
        public Builder withMaxResultBytes(int bytes) {
            if (bytes < 1 || bytes > 64 * 1024 * 1024) {
                throw new IllegalArgumentException("maxResultBytes must be between 1 and 67108864, was " + bytes);
            }
            this.maxResultBytes = bytes;
            return this;
        }

        /**
         * Prefix of the lock keys of flights ({@code singleflight:} by default); no other code may lock
         * keys under it.
         *
         * @throws IllegalArgumentException if longer than 64 characters or containing NUL
         */
        public Builder withLockKeyPrefix(String prefix) {
            Objects.requireNonNull(prefix, "prefix");
            if (prefix.length() > 64 || prefix.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("lock key prefix must be at most 64 characters without NUL, was '"
                        + (prefix.length() > 64 ? prefix.substring(0, 64) + "..." : prefix) + "'");
            }
            this.lockPrefix = prefix;
            return this;
        }

        /** Where shared calls, flights led and waits are counted; default {@link SingleflightMetrics#automatic()}. */
        public Builder withMetrics(SingleflightMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /** The clock of waits and poll timers; give the lock client's {@link dev.fenceguard.core.ManualTimeSource} in tests. */
        public Builder withTimeSource(TimeSource time) {
            this.time = Objects.requireNonNull(time, "time");
            return this;
        }

        /** An immutable, thread-safe {@link Singleflight} with these settings. */
        public Singleflight build() {
            Builder copy = new Builder(locks, store);
            copy.lockPrefix = lockPrefix;
            copy.maxWait = maxWait;
            copy.pollInterval = pollInterval;
            copy.retention = retention;
            copy.storeTimeout = storeTimeout;
            copy.maxResultBytes = maxResultBytes;
            copy.metrics = metrics;
            copy.time = time;
            return new Singleflight(copy);
        }

        private static Duration between(String name, Duration value, Duration min, Duration max) {
            Objects.requireNonNull(value, name);
            if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
                throw new IllegalArgumentException(name + " must be between " + min + " and " + max + ", was " + value);
            }
            return value;
        }
    }
}
