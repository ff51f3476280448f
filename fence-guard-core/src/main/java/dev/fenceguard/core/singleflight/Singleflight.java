package dev.fenceguard.core.singleflight;

import dev.fenceguard.core.AsyncLockClient;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.internal.Stages;
import dev.fenceguard.core.spi.FlightStore;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

/**
 * Singleflight across processes: among all callers that ask for the same key at the same time, in any
 * number of processes, one computes and the others get its result.
 *
 * <pre>{@code
 * FenceGuardJdbc jdbc = FenceGuardJdbc.builder(dataSource).build();   // PostgreSQL; close() at shutdown
 * Singleflight flights = Singleflight.builder(lockClient, jdbc.flightStore())
 *         .withMaxWait(Duration.ofSeconds(30))
 *         .build();
 * String report = flights.run("report:2026-11", Duration.ofSeconds(20), ResultCodec.utf8(),
 *         lease -> buildExpensiveReport());
 * }</pre>
 *
 * <p>This is the blocking face; {@link #async()} gives the same flights with each call returning a
 * {@code CompletionStage} ({@link AsyncSingleflight}), and the blocking face waits on it.
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
 * @since 0.1
 */
public final class Singleflight {

    /** Where the blocking face runs work: the caller waits on its own thread meanwhile. */
    private static final Executor WORKERS = task -> Thread.ofVirtual().name("fence-guard-singleflight").start(task);

    private final AsyncSingleflight async;

    private Singleflight(AsyncSingleflight async) {
        this.async = async;
    }

    /**
     * A builder for flights through {@code locks} (whose backend holds the flights' leases) and
     * {@code store} (which keeps fences and results).
     *
     * @throws NullPointerException if either is null
     */
    public static Builder builder(LockClient locks, FlightStore store) {
        return new Builder(Objects.requireNonNull(locks, "locks").async(), store);
    }

    /** Work computed by a flight's leader; receives the lease, whose fence it may pass to fenced writes. */
    @FunctionalInterface
    public interface FlightWork<T> {
        /**
         * Computes the result.
         *
         * @param lease the leader's lease, renewed while the work runs
         * @return the result; must not be null
         * @throws Exception whatever the computation throws; it reaches the callers that share the flight
         */
        T compute(Lease lease) throws Exception;
    }

    /** The non-blocking face of these flights: same settings, same flights in progress. */
    public AsyncSingleflight async() {
        return async;
    }

    /**
     * Runs the flight of {@code key} and waits for its result: computed here with {@code work} (on a
     * virtual thread of its own) if this process leads, or another caller's. An interrupt ends this
     * caller's wait only; the flight goes on for the others.
     *
     * @param key the flight key: any valid lock key (see {@link LockKey#of}) that, after the lock prefix, is still one
     * @param ttl the lease TTL of the leader (renewed while it computes): how soon waiters take over if it dies
     * @param codec turns the result into the bytes the store keeps, and back
     * @param work computes the result under the leader's lease
     * @return the result
     * @throws IllegalArgumentException if the key or TTL is invalid (before any I/O)
     * @throws NullPointerException if an argument is null
     * @throws FenceGuardException {@code TIMEOUT} if no result came within the max wait; or a store or lock error
     * @throws CompletionException wrapping a checked exception of the work or the codec (unchecked ones are thrown as they are)
     * @throws InterruptedException if interrupted while waiting
     */
    public <T> T run(String key, Duration ttl, ResultCodec<T> codec, FlightWork<T> work) throws InterruptedException {
        Objects.requireNonNull(work, "work");
        return Stages.await(async.run(key, ttl, codec, lease -> CompletableFuture.supplyAsync(() -> {
            try {
                return work.compute(lease);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        }, WORKERS)).toCompletableFuture());
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
     * The lock key of {@code key}'s flights: the lock prefix, then the key.
     *
     * @throws IllegalArgumentException if {@code key} with the prefix is not a valid lock key
     */
    public String lockKeyOf(String key) {
        return async.lockKeyOf(key);
    }

    @Override
    public String toString() {
        return async.toString().replaceFirst("^AsyncSingleflight", "Singleflight");
    }

    /**
     * Options of a {@link Singleflight}. Defaults: max wait 30 s, poll interval 1 s, retention 10 s,
     * call timeout 5 s, results up to 512 KiB, lock prefix {@code singleflight:},
     * {@link SingleflightMetrics#automatic()}, the system clock. Not thread-safe; {@link #build()} copies.
     *
     * @since 0.1
     */
    public static final class Builder {
        // Package-private: AsyncSingleflight copies them once, in its constructor (called by build()).
        final AsyncLockClient locks;
        final FlightStore store;
        String lockPrefix = "singleflight:";
        Duration maxWait = Duration.ofSeconds(30);
        Duration pollInterval = Duration.ofSeconds(1);
        Duration retention = Duration.ofSeconds(10);
        Duration callTimeout = Duration.ofSeconds(5);
        int maxResultBytes = 512 * 1024;
        SingleflightMetrics metrics;
        TimeSource time = TimeSource.system();

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
         * How long one call to the flight store (read, begin, publish, wake, watch) may take before it fails
         * with {@code TIMEOUT}. Lock calls are bounded by the lock client's own call timeout.
         *
         * @throws IllegalArgumentException if not between 1 ms and 10 minutes
         */
        public Builder withCallTimeout(Duration timeout) {
            this.callTimeout = between("callTimeout", timeout, Duration.ofMillis(1), Duration.ofMinutes(10));
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

        /** The clock of waits and poll timers; give the lock client's {@code ManualTimeSource} (fence-guard-testkit) in tests. */
        public Builder withTimeSource(TimeSource time) {
            this.time = Objects.requireNonNull(time, "time");
            return this;
        }

        /** An immutable, thread-safe {@link Singleflight} with these settings. */
        public Singleflight build() {
            // AsyncSingleflight copies every setting into its own final fields: this builder stays reusable.
            return new Singleflight(new AsyncSingleflight(this));
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
