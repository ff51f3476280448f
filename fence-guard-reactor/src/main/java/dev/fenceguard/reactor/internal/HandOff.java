package dev.fenceguard.reactor.internal;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;

/**
 * A Mono of a value that holds something until it is given back (a lease holds its lock): whatever the
 * interleaving of the answer and the subscriber's cancel, the value ends with the subscriber or is given
 * back, never dropped.
 *
 * <p>Why not {@code Mono.fromFuture(...).doOnDiscard(...)}: Reactor discards a value only inside its
 * own operators. A subscriber cancels by first flagging itself and then cancelling upstream; a value
 * that reaches it in between is dropped ({@code onNextDropped}), not discarded, and the cancel reaches
 * the source only after the value has left it. So the answer and the cancel race here, on one state:
 * <ul>
 * <li>a cancel before the answer cancels the call (the asynchronous client then gives back a grant that
 *     arrives anyway) and gives back an answer that is already on its way;
 * <li>a cancel after the answer and before demand gives the value back;
 * <li>a cancel made from inside the delivery, on the delivering thread, is the subscriber taking the
 *     value ({@code next()} and {@code Flux.take(1)} cancel as they take it): the value is the
 *     subscriber's;
 * <li>any other cancel after the delivery began (from another thread during it, or after it) gives the
 *     value back: the subscriber was cancelling as the value arrived, or a chain that holds it (a
 *     {@code flatMap} running work with it) was cancelled. A subscriber that took the value does not
 *     cancel otherwise: {@code subscribe(..)} and {@code zip} mark themselves done as they take it, so
 *     a later {@code dispose()} does not reach here, and {@code block()} and {@code toFuture()} do not
 *     cancel after a value.
 * </ul>
 * Each value is given back at most once, by whichever side loses the race.
 */
public final class HandOff<T> extends Mono<T> {

    private final Supplier<? extends CompletionStage<Optional<T>>> call;
    private final Consumer<? super T> giveBack;

    private HandOff(Supplier<? extends CompletionStage<Optional<T>>> call, Consumer<? super T> giveBack) {
        this.call = call;
        this.giveBack = giveBack;
    }

    /**
     * A Mono that calls {@code call} on each subscription and emits its value, or completes empty; a value
     * the subscriber does not end up with goes to {@code giveBack}, once.
     */
    public static <T> Mono<T> of(Supplier<? extends CompletionStage<Optional<T>>> call, Consumer<? super T> giveBack) {
        return new HandOff<>(Objects.requireNonNull(call, "call"), Objects.requireNonNull(giveBack, "giveBack"));
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        Delivery<T> delivery = new Delivery<>(actual, giveBack);
        actual.onSubscribe(delivery);
        if (delivery.isCancelled()) {
            return; // cancelled in onSubscribe: nothing was started
        }
        CompletableFuture<Optional<T>> answer;
        try {
            answer = Objects.requireNonNull(call.get(), "the call returned no stage").toCompletableFuture();
        } catch (Throwable e) {
            delivery.fail(e);
            return;
        }
        delivery.await(answer);
    }

    /** One subscription's state; see the class comment for who gives the value back when. */
    static final class Delivery<T> implements Subscription {

        private static final int WAITING = 0;    // no answer, no demand
        private static final int REQUESTED = 1;  // demand, no answer
        private static final int READY = 2;      // a value, no demand
        private static final int DELIVERING = 3; // onNext/onComplete running on `deliverer`
        private static final int DELIVERED = 4;  // onNext and onComplete returned
        private static final int TAKEN = 5;      // cancelled from inside the delivery: the value is the subscriber's
        private static final int CANCELLED = 6;  // the value, now or when it arrives, is given back
        private static final int TERMINATED = 7; // completed empty or failed: nothing to give back

        private final CoreSubscriber<? super T> actual;
        private final Consumer<? super T> giveBack;
        private final AtomicInteger state = new AtomicInteger(WAITING);
        private volatile CompletableFuture<?> answer;
        private volatile Thread deliverer;
        private T value; // written before the state that publishes it

        Delivery(CoreSubscriber<? super T> actual, Consumer<? super T> giveBack) {
            this.actual = actual;
            this.giveBack = giveBack;
        }

        boolean isCancelled() {
            return state.get() == CANCELLED;
        }

        void await(CompletableFuture<Optional<T>> answer) {
            this.answer = answer;
            if (state.get() == CANCELLED) {
                answer.cancel(false); // cancelled while the call was being made
            }
            answer.whenComplete((result, error) -> {
                if (error != null) {
                    fail(error);
                } else if (result.isPresent()) {
                    arrive(result.get());
                } else {
                    finish(null);
                }
            });
        }

        void fail(Throwable error) {
            finish(error instanceof CompletionException && error.getCause() != null ? error.getCause() : error);
        }

        /** An empty answer or a failure: delivered unless cancelled (a cancelled call fails, unheard). */
        private void finish(Throwable error) {
            for (;;) {
                int s = state.get();
                if (s != WAITING && s != REQUESTED) {
                    return;
                }
                if (state.compareAndSet(s, TERMINATED)) {
                    if (error != null) {
                        actual.onError(error);
                    } else {
                        actual.onComplete();
                    }
                    return;
                }
            }
        }

        private void arrive(T v) {
            value = v;
            for (;;) {
                int s = state.get();
                if (s == WAITING && state.compareAndSet(WAITING, READY)) {
                    return;
                }
                if (s == REQUESTED && state.compareAndSet(REQUESTED, DELIVERING)) {
                    deliver(v);
                    return;
                }
                if (s == CANCELLED) {
                    giveBack(v);
                    return;
                }
            }
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                cancel();
                actual.onError(Exceptions.nullOrNegativeRequestException(n));
                return;
            }
            for (;;) {
                int s = state.get();
                if (s == WAITING && state.compareAndSet(WAITING, REQUESTED)) {
                    return;
                }
                if (s == READY && state.compareAndSet(READY, DELIVERING)) {
                    deliver(value);
                    return;
                }
                if (s != WAITING && s != READY) {
                    return;
                }
            }
        }

        private void deliver(T v) {
            deliverer = Thread.currentThread();
            try {
                actual.onNext(v);
                actual.onComplete();
            } finally {
                deliverer = null;
                state.compareAndSet(DELIVERING, DELIVERED); // unless a cancel came meanwhile
            }
        }

        @Override
        public void cancel() {
            for (;;) {
                int s = state.get();
                switch (s) {
                    case WAITING, REQUESTED -> {
                        if (state.compareAndSet(s, CANCELLED)) {
                            CompletableFuture<?> call = answer;
                            if (call != null) {
                                call.cancel(false); // stops retries; the client gives back a grant that arrives anyway
                            }
                            return;
                        }
                    }
                    case READY, DELIVERED -> {
                        if (state.compareAndSet(s, CANCELLED)) {
                            giveBack(value);
                            return;
                        }
                    }
                    case DELIVERING -> {
                        if (deliverer == Thread.currentThread()) {
                            if (state.compareAndSet(DELIVERING, TAKEN)) {
                                return;
                            }
                        } else if (state.compareAndSet(DELIVERING, CANCELLED)) {
                            giveBack(value);
                            return;
                        }
                    }
                    default -> {
                        return; // TAKEN, CANCELLED, TERMINATED: nothing more to do
                    }
                }
            }
        }

        private void giveBack(T v) {
            value = null;
            giveBack.accept(v);
        }
    }
}
