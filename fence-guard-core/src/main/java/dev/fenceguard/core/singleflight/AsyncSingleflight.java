package dev.fenceguard.core.singleflight;

import dev.fenceguard.core.AsyncLockClient;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.BoundedStores;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.internal.EventPublisher;
import dev.fenceguard.core.internal.Redacted;
import dev.fenceguard.core.internal.Stages;
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
import java.util.concurrent.Future;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The non-blocking face of a {@link Singleflight} ({@link Singleflight#async()}): the same flights, each
 * call returning a {@link CompletionStage} at once. Among all callers that ask for the same key at the
 * same time, in any number of processes, one computes and the others get its result; the class comment
 * of {@link Singleflight} says how. No thread waits: every step is a callback of a store, lock or timer
 * stage.
 *
 * <pre>{@code
 * AsyncSingleflight flights = Singleflight.builder(lockClient, flightStore).build().async();
 * CompletionStage<String> report = flights.run("report:2026-11", Duration.ofSeconds(20), ResultCodec.utf8(),
 *         lease -> CompletableFuture.supplyAsync(() -> buildExpensiveReport(), executor));
 * }</pre>
 *
 * <p>Invalid arguments throw {@link IllegalArgumentException} (or {@link NullPointerException}) at once,
 * before any I/O, rather than failing the stage. Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class AsyncSingleflight {

    private static final Logger log = LoggerFactory.getLogger(Singleflight.class);

    /** Shortest wait before looking at a lease that should have expired: the clocks of two hosts differ a little. */
    static final Duration MIN_EXPIRY_WAIT = Duration.ofMillis(10);

    private final AsyncLockClient locks;
    private final FlightStore store;
    /** {@link #store} with every call bounded by the call timeout here: the store's server gives up, we stop waiting. */
    private final FlightStore calls;
    private final String lockPrefix;
    private final Duration maxWait;
    private final Duration pollInterval;
    private final Duration retention;
    private final Duration callTimeout;
    private final int maxResultBytes;
    /** Where shared calls, flights led, waits and retained answers go; the meters subscribe there. */
    private final EventPublisher<SingleflightEvent> events;
    private final TimeSource time;
    private final ConcurrentHashMap<LockKey, CompletableFuture<byte[]>> flights = new ConcurrentHashMap<>();

    AsyncSingleflight(Singleflight.Builder b) {
        this.locks = b.locks;
        this.store = b.store;
        this.calls = BoundedStores.flights(b.store);
        this.lockPrefix = b.lockPrefix;
        this.maxWait = b.maxWait;
        this.pollInterval = b.pollInterval;
        this.retention = b.retention;
        this.callTimeout = b.callTimeout;
        this.maxResultBytes = b.maxResultBytes;
        this.events = SingleflightEvent.publisher(b.store.name(), b.metrics != null ? b.metrics : SingleflightMetrics.automatic());
        this.time = b.time;
    }

    /**
     * Runs the flight of {@code key}: returns at once with a stage of its result, computed here if this
     * process leads, or another caller's. {@code work} is called to start the computation if this process
     * leads (on a thread of fence-guard or the store's driver: start the work there, do not do it there); the
     * lease is renewed until its stage completes. Cancelling the returned stage ends this caller's interest
     * only; the flight goes on for the others.
     *
     * @param key the flight key: any valid lock key (see {@link LockKey#of}) that, after the lock prefix, is still one
     * @param ttl the lease TTL of the leader (renewed while it computes): how soon waiters take over if it dies
     * @param codec turns the result into the bytes the store keeps, and back
     * @param work starts the computation under the leader's lease
     * @return a stage of the result; it fails with a {@link FenceGuardException} ({@code TIMEOUT} if no result
     *     came within the max wait; or a store or lock error), with the work's own exception, or with a
     *     {@link CompletionException} wrapping a checked exception of the codec
     * @throws IllegalArgumentException if the key or TTL is invalid (before any I/O)
     * @throws NullPointerException if an argument is null
     */
    public <T> CompletionStage<T> run(String key, Duration ttl, ResultCodec<T> codec,
            Function<? super Lease, ? extends CompletionStage<T>> work) {
        Objects.requireNonNull(codec, "codec");
        Objects.requireNonNull(work, "work");
        LockKey flightKey = LockKey.of(Objects.requireNonNull(key, "key"));
        Checks.ttl(ttl, flightKey);
        LockKey lockKey = lockKeyOf(flightKey);
        CompletableFuture<byte[]> shared = new CompletableFuture<>();
        CompletableFuture<byte[]> existing = flights.putIfAbsent(flightKey, shared);
        if (existing != null) {
            events.publish(new SingleflightEvent.Shared());
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
     * {@link #run(String, Duration, ResultCodec, Function)} for results that are bytes already
     * ({@link ResultCodec#bytes()}).
     *
     * @throws IllegalArgumentException if the key or TTL is invalid (before any I/O)
     */
    public CompletionStage<byte[]> run(String key, Duration ttl, Function<? super Lease, ? extends CompletionStage<byte[]>> work) {
        return run(key, ttl, ResultCodec.bytes(), work);
    }

    /**
     * The lock key of {@code key}'s flights: the lock prefix, then the key.
     *
     * @throws IllegalArgumentException if {@code key} with the prefix is not a valid lock key
     */
    public String lockKeyOf(String key) {
        return lockKeyOf(LockKey.of(Objects.requireNonNull(key, "key"))).value();
    }

    @Override
    public String toString() {
        return "AsyncSingleflight[" + store.name() + ", lock prefix '" + lockPrefix + "', max wait " + maxWait + ", retention "
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
            calls.read(key, callTimeout).whenComplete((found, error) -> {
                if (error != null) {
                    out.completeExceptionally(Stages.unwrap(error));
                } else if (found.isPresent()) {
                    answered(found.get());
                } else {
                    lead();
                }
            });
        }

        private void answered(FlightResult result) {
            if (waitStart >= 0) {
                events.publish(new SingleflightEvent.Waited(SingleflightMetrics.WaitOutcome.RESULT, waited()));
            } else {
                events.publish(new SingleflightEvent.Retained());
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
                        events.publish(new SingleflightEvent.Led(SingleflightMetrics.LedOutcome.FAILED));
                        wakeOthers(); // after the release: woken waiters find the lock free
                    }
                    out.completeExceptionally(Stages.unwrap(error));
                } else if (led.isEmpty()) {
                    waitForOthers(); // held by another process's flight
                } else {
                    // Type tests, not a pattern switch (here and in underLease): a pattern switch's first run
                    // generates a class with the JDK's class-file API, several ms inside a user's first flight.
                    Led outcome = led.get();
                    if (outcome instanceof Led.Published p) {
                        events.publish(new SingleflightEvent.Led(SingleflightMetrics.LedOutcome.PUBLISHED));
                        if (waitStart >= 0) {
                            events.publish(new SingleflightEvent.Waited(SingleflightMetrics.WaitOutcome.TOOK_OVER, waited()));
                        }
                        out.complete(p.value());
                    } else if (outcome instanceof Led.Retained r) {
                        answered(r.result());
                    } else if (outcome instanceof Led.Superseded s) {
                        log.info("singleflight '{}': a newer flight (fence {}) started while this one ran; its result "
                                + "was not published, waiting for the newer one", key, s.newest());
                        events.publish(new SingleflightEvent.Led(SingleflightMetrics.LedOutcome.SUPERSEDED));
                        deadline = time.nanoTime() + maxWait.toNanos(); // a fresh wait: the newer flight only began
                        waitForOthers();
                    } else {
                        out.completeExceptionally(new IllegalStateException("unknown flight outcome " + outcome));
                    }
                }
            });
        }

        private CompletionStage<Led> underLease(Lease lease) {
            long fence = lease.fence().value();
            return calls.begin(key, fence, callTimeout).thenCompose(start -> {
                if (start instanceof FlightStart.Retained r) {
                    return CompletableFuture.completedFuture(new Led.Retained(r.result()));
                }
                if (start instanceof FlightStart.Superseded s) {
                    return CompletableFuture.completedFuture(new Led.Superseded(s.newest()));
                }
                if (!(start instanceof FlightStart.Started)) {
                    throw new IllegalStateException("unknown flight start " + start);
                }
                return work.apply(lease).thenCompose(bytes ->
                        calls.publish(key, fence, bytes, retention, callTimeout).thenApply(outcome -> {
                            if (outcome instanceof WriteOutcome.Applied) {
                                return (Led) new Led.Published(bytes);
                            }
                            if (outcome instanceof WriteOutcome.Stale st) {
                                return new Led.Superseded(st.currentFence());
                            }
                            throw new FenceGuardException(ErrorCode.INTERNAL, key.value(),
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
                events.publish(new SingleflightEvent.Waited(SingleflightMetrics.WaitOutcome.GAVE_UP, waited()));
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
            Future<?> giveUp = time.schedule(callTimeout, () -> bounded.completeExceptionally(new FenceGuardException(
                    ErrorCode.TIMEOUT, key.value(), "the store's watch did not take hold within " + callTimeout)));
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
            calls.wake(key, callTimeout).whenComplete((v, error) -> {
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
}
