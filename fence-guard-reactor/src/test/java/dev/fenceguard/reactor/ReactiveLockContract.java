package dev.fenceguard.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LeaseSet;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.reactor.SpyBackend.Event;
import dev.fenceguard.testkit.BlockingBackend;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The Mono face on one backend: laziness, renewal while the work is pending, release on completion,
 * error and cancellation, late grants, and, with BlockHound installed, no blocking call on a
 * non-blocking thread anywhere on the lock path. Each backend's test extends it.
 */
abstract class ReactiveLockContract {

    static final Duration LONG = Duration.ofSeconds(30);
    static final Duration WAIT = Duration.ofSeconds(30);

    private final String prefix = "reactor:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    SpyBackend spy;
    BlockingBackend store;
    ReactiveLockClient locks;

    /** The backend under test; may be shared between tests (keys are unique per test instance). */
    abstract LockBackend backend();

    /**
     * The TTL of the leases the tests watch being renewed; default 1 s. Renewal at a third of it must
     * answer before the lease's deadline even on a loaded machine whose first calls are slow, or the
     * lease is lost and the test fails waiting for renewals.
     */
    Duration renewedTtl() {
        return Duration.ofSeconds(1);
    }

    @BeforeEach
    void client() {
        spy = new SpyBackend(backend());
        store = BlockingBackend.of(backend());
        locks = ReactiveLockClient.of(LockClient.builder(spy).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(5), Duration.ofMillis(50)).build());
    }

    String key(String name) {
        return prefix + name;
    }

    Optional<LockInfo> stored(String key) {
        return store.lookup(LockKey.of(key));
    }

    @Test
    void nothingHappensBeforeSubscription() {
        String k = key("lazy");
        Mono<Lease> acquire = locks.acquire(k, LONG, WAIT);
        Mono<Lease> attempt = locks.tryAcquire(k, LONG);
        Mono<String> work = locks.withLock(k, LONG, WAIT, lease -> Mono.just("ran"));
        Mono<LeaseSet> all = locks.acquireAll(List.of(key("lazy-2"), key("lazy-3")), LONG, WAIT);
        assertThat(spy.count(Event.ACQUIRE_SENT)).as("acquire calls before any subscription").isZero();
        assertThat(stored(k)).isEmpty();

        StepVerifier.create(work).expectNext("ran").verifyComplete();
        Lease lease = acquire.block(WAIT);
        assertThat(lease).isNotNull();
        StepVerifier.create(attempt).as("the key is held: empty").verifyComplete();
        StepVerifier.create(locks.release(lease)).expectNext(true).verifyComplete();
        StepVerifier.create(all.flatMap(locks::release)).expectNext(true).verifyComplete();
        StepVerifier.create(locks.release(lease)).as("a second release").expectNext(false).verifyComplete();
    }

    @Test
    void withLockRenewsWhileTheWorkIsPendingAndReleasesWhenItCompletes() throws Exception {
        String k = key("renewed");
        Sinks.One<String> finish = Sinks.one();
        AtomicReference<Lease> held = new AtomicReference<>();
        Mono<String> run = locks.withLock(k, renewedTtl(), WAIT, lease -> {
            held.set(lease);
            return finish.asMono().map(v -> v + " with fence " + lease.fence().value());
        });
        StepVerifier.create(run)
                .then(() -> {
                    awaitQuietly(Event.EXTENDED, 3); // three renewals: the lease outlived its TTL while the work waited
                    assertThat(held.get().isValid()).isTrue();
                    assertThat(stored(k)).map(i -> i.fence()).contains(held.get().fence());
                    finish.tryEmitValue("done");
                })
                .assertNext(v -> assertThat(v).isEqualTo("done with fence " + held.get().fence().value()))
                .verifyComplete();
        assertThat(stored(k)).as("released before the value was emitted").isEmpty();
        assertThat(spy.count(Event.RELEASED)).isEqualTo(1);
    }

    @Test
    void withLockReleasesWhenTheWorkFailsOrCompletesEmpty() {
        String k = key("failing");
        StepVerifier.create(locks.withLock(k, LONG, WAIT, lease -> Mono.error(new IllegalStateException("work failed"))))
                .expectErrorMessage("work failed")
                .verify(WAIT);
        assertThat(stored(k)).isEmpty();
        StepVerifier.create(locks.withLock(k, LONG, WAIT, lease -> Mono.<Void>empty())).verifyComplete();
        assertThat(stored(k)).isEmpty();
        assertThat(spy.count(Event.RELEASED)).isEqualTo(2);
    }

    @Test
    void cancellingWhileWaitingForTheLockLeavesNoLock() throws Exception {
        String k = key("cancel-waiting");
        Lease holder = locks.tryAcquire(k, LONG).block(WAIT);
        assertThat(holder).isNotNull();
        AtomicReference<Object> signal = new AtomicReference<>();
        Disposable waiting = locks.withLock(k, LONG, WAIT, lease -> Mono.just("ran"))
                .subscribe(signal::set, signal::set, () -> signal.compareAndSet(null, "completed"));
        spy.await(Event.HELD, 3); // the waiter has been refused and is retrying on the timer
        waiting.dispose();
        spy.awaitNoAcquireInFlight();
        StepVerifier.create(locks.release(holder)).expectNext(true).verifyComplete();
        assertThat(stored(k)).as("nothing left locked after the cancel").isEmpty();
        assertThat(signal.get()).as("a cancelled subscriber hears nothing").isNull();
        assertThat(spy.count(Event.GRANTED)).as("only the holder was ever granted").isEqualTo(1);
    }

    @Test
    void cancellingWhileHoldingCancelsTheWorkAndReleases() throws Exception {
        String k = key("cancel-holding");
        CompletableFuture<Lease> started = new CompletableFuture<>();
        Sinks.Empty<Void> workCancelled = Sinks.empty();
        Disposable running = locks.withLock(k, LONG, WAIT, lease -> {
            started.complete(lease);
            return Mono.never().doOnCancel(workCancelled::tryEmitEmpty);
        }).subscribe();
        Lease lease = started.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(stored(k)).map(LockInfo::fence).contains(lease.fence());
        running.dispose();
        StepVerifier.create(workCancelled.asMono()).as("the work's Mono was cancelled").verifyComplete();
        spy.await(Event.RELEASED, 1);
        assertThat(stored(k)).as("nothing left locked after the cancel").isEmpty();
        assertThat(lease.isValid()).isFalse();
    }

    @Test
    void aGrantArrivingAfterTheCancelIsReleased() throws Exception {
        String k = key("late-grant");
        CompletableFuture<Void> gate = spy.holdAcquireAnswers();
        AtomicReference<Object> signal = new AtomicReference<>();
        Disposable attempt = locks.tryAcquire(k, LONG).subscribe(signal::set, signal::set);
        spy.await(Event.GRANTED, 1);
        assertThat(stored(k)).as("the backend granted the lock; its answer is held back").isPresent();
        attempt.dispose();
        gate.complete(null);
        spy.await(Event.RELEASED, 1);
        assertThat(stored(k)).as("the late grant was released").isEmpty();
        assertThat(signal.get()).as("a cancelled subscriber hears nothing").isNull();
    }

    @Test
    void acquireAllIsAllOrNothingAndReleasesAsASet() {
        List<String> keys = List.of(key("set-c"), key("set-a"), key("set-b"));
        Lease blocker = locks.tryAcquire(key("set-b"), LONG).block(WAIT);
        assertThat(blocker).isNotNull();
        StepVerifier.create(locks.acquireAll(keys, LONG, Duration.ZERO)).as("set-b is held").verifyComplete();
        awaitQuietly(Event.RELEASED, 1); // the client gives set-a back without waiting for the answer
        assertThat(stored(key("set-a"))).as("set-a, taken before set-b, was given back").isEmpty();
        StepVerifier.create(locks.release(blocker)).expectNext(true).verifyComplete();

        LeaseSet set = locks.acquireAll(keys, LONG, WAIT).block(WAIT);
        assertThat(set).isNotNull();
        assertThat(set.leases()).extracting(l -> l.key().value()).containsExactly(key("set-a"), key("set-b"), key("set-c"));
        keys.forEach(k -> assertThat(stored(k)).as(k).isPresent());
        StepVerifier.create(locks.release(set)).expectNext(true).verifyComplete();
        keys.forEach(k -> assertThat(stored(k)).as(k).isEmpty());
        StepVerifier.create(locks.release(set)).as("released twice").expectNext(false).verifyComplete();
    }

    /**
     * Every operation, subscribed on {@code Schedulers.parallel()} and continued there, with retries and
     * renewals on fence-guard's timer: BlockHound catches no blocking call on any non-blocking thread.
     */
    @Test
    void noBlockingCallOnANonBlockingThreadAnywhereOnTheLockPath() {
        List<String> before = NoBlocking.caught();
        String a = key("nb-a");
        String b = key("nb-b");
        Sinks.One<String> finish = Sinks.one();
        Mono<List<Object>> everything = Mono.fromCallable(Schedulers::isInNonBlockingThread)
                .doOnNext(nonBlocking -> assertThat(nonBlocking).as("the calls start on a non-blocking thread").isTrue())
                .then(locks.tryAcquire(a, LONG))
                .publishOn(Schedulers.parallel())
                .flatMap(holder -> locks.acquire(a, LONG, Duration.ofMillis(200)) // refused, retried on the timer, empty
                        .map(Object.class::cast)
                        .defaultIfEmpty("stayed held")
                        .publishOn(Schedulers.parallel())
                        .flatMap(waited -> locks.extend(holder, LONG)
                                .then(locks.lookup(a))
                                .then(locks.release(holder))
                                .map(released -> List.of(waited, released))))
                .flatMap(first -> locks.withLock(b, renewedTtl(), WAIT, lease -> {
                    // finish after three renewals, told by the spy on the thread that saw the third
                    spy.onEvents(Event.EXTENDED, 3, () -> finish.tryEmitValue("renewed"));
                    return finish.asMono();
                }).publishOn(Schedulers.parallel()).map(v -> List.<Object>of(first.get(0), first.get(1), v)))
                .flatMap(done -> locks.acquireAll(List.of(a, b), LONG, WAIT).publishOn(Schedulers.parallel())
                        .flatMap(locks::release).map(released -> List.<Object>of(done.get(0), done.get(1), done.get(2), released)))
                .subscribeOn(Schedulers.parallel());
        StepVerifier.create(everything)
                .expectNext(List.of("stayed held", true, "renewed", true))
                .expectComplete()
                .verify(WAIT.multipliedBy(2));
        assertThat(NoBlocking.isInstalled()).isTrue();
        assertThat(NoBlocking.caughtSince(before)).as("blocking calls on non-blocking threads").isEmpty();
        assertThat(stored(a)).isEmpty();
        assertThat(stored(b)).isEmpty();
    }

    /** Callers at once in {@link #manyCallersAtOnceBlockNoNonBlockingThread}, each on a thread of its own. */
    static final int CALLERS = 16;

    /** Rounds of acquire, extend, lookup and release per caller; enough that callers meet on the connection. */
    int concurrentRounds() {
        return 200;
    }

    /**
     * Many callers at once on non-blocking threads, each a loop of acquire, extend, lookup and release on a
     * key of its own, sending every step from one of those threads (as a WebFlux service hops threads):
     * so calls meet on the backend's one connection from several threads at the same moment, and whatever
     * a driver does when they collide (a lock it takes for each write, say) happens on a non-blocking
     * thread, where BlockHound catches any wait. Calls that each went out from the thread that completed
     * the last (a driver's one event loop) would never collide.
     */
    @Test
    void manyCallersAtOnceBlockNoNonBlockingThread() {
        List<String> before = NoBlocking.caught();
        Scheduler callers = Schedulers.newParallel("reactor-test-callers", CALLERS);
        try {
            Flux<Boolean> all = Flux.range(0, CALLERS).flatMap(caller -> Flux.range(0, concurrentRounds())
                    .concatMap(round -> round(key("busy-" + caller), callers))
                    .subscribeOn(callers), CALLERS);
            StepVerifier.create(all.all(Boolean::booleanValue))
                    .expectNext(true)
                    .expectComplete()
                    .verify(WAIT.multipliedBy(4));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; blocking calls caught: " + NoBlocking.caughtSince(before), e);
        } finally {
            callers.dispose();
        }
        assertThat(NoBlocking.caughtSince(before)).as("blocking calls on non-blocking threads").isEmpty();
        for (int caller = 0; caller < CALLERS; caller++) {
            assertThat(stored(key("busy-" + caller))).isEmpty();
        }
    }

    /** One round of {@link #manyCallersAtOnceBlockNoNonBlockingThread}: true if the lease was had and given back. */
    private Mono<Boolean> round(String key, Scheduler callers) {
        return locks.tryAcquire(key, LONG).publishOn(callers)
                .flatMap(lease -> locks.extend(lease, LONG).publishOn(callers)
                        .flatMap(extended -> locks.lookup(key).publishOn(callers))
                        .flatMap(info -> locks.release(lease).publishOn(callers)))
                .defaultIfEmpty(false);
    }

    private void awaitQuietly(Event e, int n) {
        try {
            spy.await(e, n);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new AssertionError(ex);
        }
    }
}
