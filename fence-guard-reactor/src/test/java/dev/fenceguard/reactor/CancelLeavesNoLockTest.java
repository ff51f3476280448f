package dev.fenceguard.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LeaseSet;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.reactor.SpyBackend.Event;
import dev.fenceguard.testkit.BlockingBackend;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * A cancel leaves no lock behind, at every point where it can meet the grant: before the backend
 * answers, after the answer but before any demand, while the subscriber is half-way through its own
 * cancel (its flag set, the cancel not yet passed upstream, so the grant it is then handed is dropped),
 * while the grant is being delivered, and after it was delivered into a chain that is then cancelled.
 * Each interleaving is forced with the spy's gate and latches; the stress test races the two at random.
 * A cancel made by the subscriber from inside the delivery (as {@code block()} and {@code next()} do
 * when they take the value) keeps the lease.
 */
class CancelLeavesNoLockTest {

    private static final Duration TTL = Duration.ofSeconds(60);
    private static final long WAIT_S = 30;
    /** Reactor's subscriber-local onNextDropped hook: tells the test that a subscriber dropped the grant. */
    private static final String ON_NEXT_DROPPED = "reactor.onNextDropped.local";

    /** Every Mono of the face that carries a lease. */
    enum Operation {
        TRY_ACQUIRE, ACQUIRE, ACQUIRE_ALL;

        Mono<?> start(ReactiveLockClient locks, List<String> keys) {
            return switch (this) {
                case TRY_ACQUIRE -> locks.tryAcquire(keys.getFirst(), TTL);
                case ACQUIRE -> locks.acquire(keys.getFirst(), TTL, Duration.ofSeconds(WAIT_S));
                case ACQUIRE_ALL -> locks.acquireAll(keys, TTL, Duration.ofSeconds(WAIT_S));
            };
        }

        /** The keys a run takes: one, or two for acquireAll. */
        List<String> keys(String prefix) {
            return this == ACQUIRE_ALL ? List.of(prefix + "a", prefix + "b") : List.of(prefix + "a");
        }
    }

    private final InMemoryLockBackend memory = new InMemoryLockBackend();
    private final BlockingBackend store = BlockingBackend.of(memory);
    private SpyBackend spy;
    private ReactiveLockClient locks;

    @BeforeEach
    void client() {
        spy = new SpyBackend(memory);
        locks = ReactiveLockClient.of(LockClient.builder(spy).withMetrics(LockMetrics.none()).build());
    }

    private static String prefix() {
        return "cancel:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    }

    private void assertNoneHeld(List<String> keys) {
        keys.forEach(k -> assertThat(store.lookup(LockKey.of(k))).as("%s is left held", k).isEmpty());
    }

    @ParameterizedTest
    @EnumSource(Operation.class)
    void aCancelBeforeTheBackendAnswersLeavesNoLock(Operation op) throws Exception {
        List<String> keys = op.keys(prefix());
        CompletableFuture<Void> gate = spy.holdAcquireAnswers();
        Disposable running = op.start(locks, keys).subscribe();
        spy.await(Event.GRANTED, 1);
        running.dispose();
        gate.complete(null);
        spy.awaitEveryGrantReleased(); // for acquireAll: the first key only, the second is never asked for
        assertNoneHeld(keys);
    }

    @ParameterizedTest
    @EnumSource(Operation.class)
    void aCancelAfterTheAnswerButBeforeAnyDemandLeavesNoLock(Operation op) throws Exception {
        List<String> keys = op.keys(prefix());
        AtomicReference<Object> received = new AtomicReference<>();
        BaseSubscriber<Object> noDemand = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription subscription) {
                // no request: the grant has to wait for demand
            }

            @Override
            protected void hookOnNext(Object value) {
                received.set(value);
            }
        };
        // The in-memory backend answers at once, so the grant is waiting for demand when subscribe returns.
        op.start(locks, keys).subscribe(noDemand);
        assertThat(spy.count(Event.GRANTED)).isEqualTo(keys.size());
        noDemand.cancel();
        spy.await(Event.RELEASED, keys.size());
        assertNoneHeld(keys);
        assertThat(received.get()).isNull();
    }

    /**
     * The race of the report: the subscriber's cancel has begun (its own flag is set, so it drops what it
     * is handed, as every Reactor subscriber does) but has not reached the Mono yet when the grant is
     * delivered; the cancel then reaches the Mono after the delivery.
     */
    @ParameterizedTest
    @EnumSource(Operation.class)
    void aGrantDeliveredWhileTheSubscriberIsCancellingIsReleased(Operation op) throws Exception {
        List<String> keys = op.keys(prefix());
        CompletableFuture<Void> gate = spy.holdAcquireAnswers();
        CountDownLatch cancelBegun = new CountDownLatch(1);
        CountDownLatch grantDropped = new CountDownLatch(1);
        AtomicReference<Object> received = new AtomicReference<>();
        Disposable running = op.start(locks, keys)
                .doOnCancel(() -> { // runs inside the subscriber's dispose(), before the cancel goes upstream
                    cancelBegun.countDown();
                    awaitLatch(grantDropped);
                })
                .subscribe(received::set, error -> {}, null,
                        Context.of(ON_NEXT_DROPPED, (Consumer<Object>) dropped -> grantDropped.countDown()));
        spy.await(Event.ACQUIRE_SENT, 1);
        Thread canceller = Thread.ofPlatform().start(running::dispose);
        awaitLatch(cancelBegun);
        gate.complete(null); // delivers the grant to a subscriber that has flagged itself cancelled
        awaitLatch(grantDropped);
        assertReleasedAfter(canceller, keys, received);
    }

    /** The cancel reaches the Mono from another thread while the grant is being delivered. */
    @ParameterizedTest
    @EnumSource(Operation.class)
    void aCancelArrivingWhileTheGrantIsBeingDeliveredReleasesIt(Operation op) throws Exception {
        List<String> keys = op.keys(prefix());
        CompletableFuture<Void> gate = spy.holdAcquireAnswers();
        CountDownLatch delivering = new CountDownLatch(1);
        CountDownLatch cancelled = new CountDownLatch(1);
        AtomicReference<Object> received = new AtomicReference<>();
        Disposable running = op.start(locks, keys)
                .doOnNext(value -> { // the grant is on its way down; hold it there until the cancel went up
                    delivering.countDown();
                    awaitLatch(cancelled);
                })
                .subscribe(received::set);
        spy.await(Event.ACQUIRE_SENT, 1);
        Thread deliverer = Thread.ofPlatform().start(() -> gate.complete(null));
        awaitLatch(delivering);
        running.dispose();
        cancelled.countDown();
        assertReleasedAfter(deliverer, keys, received);
    }

    /** Once {@code other} (the test's second thread) is done: every key released, the subscriber without a lease. */
    private void assertReleasedAfter(Thread other, List<String> keys, AtomicReference<Object> received) throws InterruptedException {
        other.join(TimeUnit.SECONDS.toMillis(WAIT_S));
        assertThat(other.isAlive()).as("the test's other thread finished").isFalse();
        spy.await(Event.RELEASED, keys.size());
        assertNoneHeld(keys);
        assertThat(received.get()).as("the subscriber dropped the lease (a Reactor subscriber drops what arrives after its cancel)")
                .isNull();
    }

    /** Delivered into {@code flatMap}, whose work is then cancelled: the chain gave the lease up. */
    @ParameterizedTest
    @EnumSource(Operation.class)
    void cancellingAChainThatHoldsTheDeliveredLeaseReleasesIt(Operation op) throws Exception {
        List<String> keys = op.keys(prefix());
        CountDownLatch working = new CountDownLatch(1);
        Disposable running = op.start(locks, keys)
                .flatMap(lease -> Mono.never().doOnSubscribe(s -> working.countDown()))
                .subscribe();
        awaitLatch(working);
        keys.forEach(k -> assertThat(store.lookup(LockKey.of(k))).as("%s is held while the work runs", k).isPresent());
        running.dispose();
        spy.await(Event.RELEASED, keys.size());
        assertNoneHeld(keys);
    }

    /** {@code block()} and {@code next()} cancel from inside the delivery as they take the value: it is theirs. */
    @ParameterizedTest
    @EnumSource(Operation.class)
    void aSubscriberThatCancelsAsItTakesTheLeaseKeepsIt(Operation op) {
        List<String> keys = op.keys(prefix());
        Object blocked = op.start(locks, keys).block(Duration.ofSeconds(WAIT_S));
        AtomicInteger cancels = new AtomicInteger();
        Object next = Flux.from(op.start(locks, op.keys(prefix()))).doOnCancel(cancels::incrementAndGet).next()
                .block(Duration.ofSeconds(WAIT_S));
        assertThat(cancels.get()).as("next() cancelled as it took the lease").isEqualTo(1);
        for (Object taken : List.of(blocked, next)) {
            assertThat(taken).isNotNull();
            List<Lease> leases = taken instanceof LeaseSet set ? set.leases() : List.of((Lease) taken);
            leases.forEach(l -> assertThat(store.lookup(l.key())).as("%s is still held", l.key()).isPresent());
            leases.forEach(l -> assertThat(l.isValid()).isTrue());
            assertThat(taken instanceof LeaseSet set ? locks.release(set).block() : locks.release((Lease) taken).block())
                    .as("released by its holder, the first release").isTrue();
        }
        assertThat(spy.count(Event.RELEASED)).isEqualTo(2 * keys.size());
    }

    /**
     * A thousand rounds of a grant and a cancel let go at once from two threads, as they fall: after
     * each, the key is held only if the subscriber got the lease, and it is free once that is released.
     */
    @Test
    void aThousandRacesOfGrantAndCancelLeaveNoLock() throws Exception {
        int rounds = 1_000;
        int received = 0;
        String prefix = prefix();
        for (int round = 0; round < rounds; round++) {
            String key = prefix + round;
            CompletableFuture<Void> gate = spy.holdAcquireAnswers();
            AtomicReference<Lease> got = new AtomicReference<>();
            Disposable running = locks.acquire(key, TTL, Duration.ofSeconds(WAIT_S)).subscribe(got::set);
            spy.await(Event.ACQUIRE_SENT, round + 1);
            CountDownLatch go = new CountDownLatch(1);
            Thread deliverer = Thread.ofPlatform().start(() -> {
                awaitLatch(go);
                gate.complete(null);
            });
            Thread canceller = Thread.ofPlatform().start(() -> {
                awaitLatch(go);
                running.dispose();
            });
            go.countDown();
            deliverer.join(TimeUnit.SECONDS.toMillis(WAIT_S));
            canceller.join(TimeUnit.SECONDS.toMillis(WAIT_S));
            assertThat(deliverer.isAlive() || canceller.isAlive()).as("round %d finished", round).isFalse();
            if (got.get() != null) {
                received++;
                assertThat(locks.release(got.get()).block(Duration.ofSeconds(WAIT_S))).as("round %d", round).isTrue();
            }
            spy.await(Event.RELEASED, round + 1);
            assertNoneHeld(List.of(key));
        }
        assertThat(spy.count(Event.RELEASED)).as("one release per round, none twice").isEqualTo(rounds);
        System.out.printf("grant/cancel races: the subscriber got the lease in %d of %d rounds%n", received, rounds);
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            if (!latch.await(WAIT_S, TimeUnit.SECONDS)) {
                throw new AssertionError("waited " + WAIT_S + " s for a step of the interleaving");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
