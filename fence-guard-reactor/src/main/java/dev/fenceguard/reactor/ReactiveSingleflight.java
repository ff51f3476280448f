package dev.fenceguard.reactor;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.internal.Checks;
import dev.fenceguard.core.singleflight.AsyncSingleflight;
import dev.fenceguard.core.singleflight.ResultCodec;
import dev.fenceguard.core.singleflight.Singleflight;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * The {@link Mono} face of a {@link Singleflight}, over its {@link AsyncSingleflight}: the same flights,
 * each a lazy {@code Mono} that does nothing until subscribed and never blocks a thread. It adds no
 * logic of its own: the class comment of {@link Singleflight} says how a flight runs.
 *
 * <pre>{@code
 * ReactiveSingleflight flights = ReactiveSingleflight.of(Singleflight.builder(lockClient, flightStore).build());
 * Mono<String> report = flights.run("report:2026-11", Duration.ofSeconds(20), ResultCodec.utf8(),
 *         lease -> reports.build("2026-11"));                           // a Mono<String>, run by the leader only
 * }</pre>
 *
 * <p><b>Cancellation</b> ends the subscriber's interest only, as cancelling a stage of
 * {@link AsyncSingleflight} does: a flight this process leads goes on for the other callers that share
 * it, its lease is renewed until the work's Mono ends and released then, and its result is published
 * for the waiters of other processes. Nothing is left held or half-started: the lease ends with the
 * work, and a flight whose work fails wakes the waiters to take over.
 *
 * <p><b>Bad input</b> (an invalid key or TTL, a null) throws {@link IllegalArgumentException} or
 * {@link NullPointerException} when the method is called. Signals arrive on the thread that completed
 * the store or lock call: move blocking work elsewhere with {@link Mono#publishOn}. Immutable and
 * thread-safe.
 *
 * @since 0.1
 */
public final class ReactiveSingleflight {

    private final AsyncSingleflight async;

    private ReactiveSingleflight(AsyncSingleflight async) {
        this.async = async;
    }

    /**
     * The Mono face of {@code flights}: the same settings and the same flights in progress.
     *
     * @throws NullPointerException if {@code flights} is null
     */
    public static ReactiveSingleflight of(Singleflight flights) {
        return new ReactiveSingleflight(Objects.requireNonNull(flights, "flights").async());
    }

    /**
     * Runs the flight of {@code key}: on subscription, joins the flight in progress in this process or
     * starts one, which answers with a retained result, leads (subscribing to {@code work}'s Mono under the
     * leader's lease) or waits for another process's leader; see {@link Singleflight#run}. Every
     * subscription is a new call.
     *
     * @param key the flight key: any valid lock key that, after the lock prefix, is still one
     * @param ttl the lease TTL of the leader (renewed while its work runs)
     * @param codec turns the result into the bytes the store keeps, and back
     * @param work starts the computation under the leader's lease; it must emit one value. The
     *     subscriber's {@link reactor.util.context.Context} is visible to it
     * @return a Mono of the result; it fails with a {@link FenceGuardException} ({@code TIMEOUT} if no
     *     result came within the max wait; or a store or lock error) or with the work's error
     * @throws IllegalArgumentException if the key or TTL is invalid
     * @throws NullPointerException if an argument is null
     */
    public <T> Mono<T> run(String key, Duration ttl, ResultCodec<T> codec, Function<? super Lease, ? extends Mono<T>> work) {
        Objects.requireNonNull(codec, "codec");
        Objects.requireNonNull(work, "work");
        LockKey flightKey = LockKey.of(Objects.requireNonNull(key, "key"));
        Checks.ttl(ttl, flightKey);
        async.lockKeyOf(key); // the key with the prefix must be a valid lock key too: fail now, not on subscription
        return Mono.deferContextual(context -> Mono.fromFuture(
                () -> async.run(key, ttl, codec, lease -> start(work, lease, context)).toCompletableFuture()));
    }

    /**
     * {@link #run(String, Duration, ResultCodec, Function)} for results that are bytes already
     * ({@link ResultCodec#bytes()}).
     *
     * @throws IllegalArgumentException if the key or TTL is invalid
     * @throws NullPointerException if an argument is null
     */
    public Mono<byte[]> run(String key, Duration ttl, Function<? super Lease, ? extends Mono<byte[]>> work) {
        return run(key, ttl, ResultCodec.bytes(), work);
    }

    /** The asynchronous face this one wraps. */
    public AsyncSingleflight async() {
        return async;
    }

    @Override
    public String toString() {
        return async.toString().replaceFirst("^AsyncSingleflight", "ReactiveSingleflight");
    }

    /** The work as the future the flight waits on; never cancelled by a caller's cancel (the flight is shared). */
    private static <T> CompletionStage<T> start(Function<? super Lease, ? extends Mono<T>> work, Lease lease, ContextView context) {
        Mono<T> running = Objects.requireNonNull(work.apply(lease), "flight work must not return a null Mono");
        return running.contextWrite(context).toFuture();
    }
}
