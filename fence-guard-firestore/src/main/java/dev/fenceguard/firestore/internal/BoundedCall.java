package dev.fenceguard.firestore.internal;

import com.google.api.core.ApiFuture;
import com.google.api.core.ApiFutureCallback;
import com.google.api.core.ApiFutures;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.Timer;
import io.grpc.Context;
import io.grpc.Deadline;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One operation (a lock operation or a fenced write) as a chain of Firestore RPCs (read, conditional
 * write, re-read after a lost race, ...) under one deadline, without a thread waiting anywhere: each
 * step is started from the callback of the one before. {@link FirestoreHandle} builds its
 * read-then-write on it.
 *
 * <p>How the deadline reaches the RPCs: the Firestore SDK takes no per-call deadline, but a gRPC call
 * started while a {@link Context} is current is cancelled with that context and sends the context's
 * deadline to the server ({@code grpc-timeout}), so that the server gives up as well. At
 * {@code timeout} the context is cancelled, which ends the RPC still out with {@code CANCELLED} (which
 * the SDK does not retry); the operation then completes with {@code TIMEOUT} and the SDK future of that
 * RPC is cancelled too, which stops the SDK's retries of a write. The context's own deadline is
 * {@link #GRACE} later, because a call that the gRPC deadline ends gets {@code DEADLINE_EXCEEDED},
 * which the SDK retries for reads, on its own threads and outside this context, where neither cancel
 * reaches the retry. Retries the SDK starts after an {@code UNAVAILABLE} read escape the context the
 * same way: they hold no thread, end by the SDK's own retry limits, and their answers are ignored. Both
 * the cancel and the context's deadline run on fence-guard's one timer thread ({@link Timer}): this
 * class has no timer of its own. This is the backends' half of the timeout contract of
 * {@link dev.fenceguard.core.spi.LockBackend} (the RPC, and so the server, gives up by the timeout);
 * the lock client ends its caller's wait and releases a grant that reaches it late.
 *
 * <p>The context is forked from {@link Context#ROOT}, not the caller's, so that a cancelled caller's
 * context (an incoming gRPC request, say) cannot cancel a release or a renewal.
 *
 * <p>gRPC runs a call's callbacks inside the context the call was started in, so the chain's steps
 * run inside this operation's context, and so would whatever a user chained on the returned future:
 * an RPC they start there would be cancelled with this context as the operation ends. The future is
 * therefore completed with the caller's context current again (the one current when the operation
 * started; {@link Context#ROOT} if that was another operation's): callbacks chained on it run where a
 * callback on the SDK's own futures would.
 *
 * @param <T> the operation's answer
 */
public final class BoundedCall<T> {

    /** How much later than the cancel at the timeout the gRPC deadline falls (see the class comment). */
    static final Duration GRACE = Duration.ofMillis(100);

    /** Runs a callback where the event happened: every step only starts the next RPC or completes. */
    private static final Executor DIRECT = Runnable::run;

    /** Marks the contexts of these operations, so that one is never taken for a caller's. */
    private static final Context.Key<Boolean> OPERATION = Context.key("fence-guard-firestore-operation");

    private final String subject;
    private final String operation;
    private final Duration timeout;
    private final Context.CancellableContext context;
    /** Where the returned future completes: see the class comment. */
    private final Context caller;
    private final CompletableFuture<T> result = new CompletableFuture<>();
    private volatile ApiFuture<?> inFlight;

    private BoundedCall(String subject, String operation, Duration timeout) {
        this.subject = subject;
        this.operation = operation;
        this.timeout = timeout;
        this.context = Context.ROOT.withValue(OPERATION, Boolean.TRUE)
                .withDeadline(Deadline.after(timeout.plus(GRACE).toNanos(), TimeUnit.NANOSECONDS), Timer.executor());
        Context current = Context.current();
        this.caller = OPERATION.get(current) == null ? current : Context.ROOT;
    }

    /**
     * Starts an operation: {@code body} sends its first RPC with {@link #send} and goes on from the
     * callbacks. The returned future completes with what the chain completes it with, or with a
     * {@code TIMEOUT} {@link FenceGuardException} when the context is cancelled at {@code timeout},
     * whichever comes first. Completing or cancelling it ends the deadline and cancels an RPC still out.
     */
    public static <T> CompletableFuture<T> start(String subject, String operation, Duration timeout, Consumer<BoundedCall<T>> body) {
        BoundedCall<T> call = new BoundedCall<>(subject, operation, timeout);
        Timer.Bound cancelAtTimeout = Timer.bound(timeout, () -> call.context.cancel(null));
        // Whatever cancels the context (the timeout, its deadline, the end of the operation, when the
        // result is complete already and this does nothing), the operation has timed out.
        call.context.addListener(cancelled -> call.timedOut(), DIRECT);
        call.result.whenComplete((value, error) -> {
            cancelAtTimeout.lift();
            call.context.cancel(null); // ends the context's deadline timer; cancels a call still out
            ApiFuture<?> f = call.inFlight;
            if (f != null && !f.isDone()) {
                f.cancel(true); // also stops the SDK's retries, which run outside the context
            }
        });
        call.step(() -> body.accept(call));
        return call.result;
    }

    /**
     * Sends one RPC inside this operation's deadline and hands its answer to {@code then}; a failure
     * completes the operation with the mapped {@link FenceGuardException}.
     */
    public <R> void send(Supplier<ApiFuture<R>> rpc, Consumer<? super R> then) {
        sendRaw(rpc, new ApiFutureCallback<R>() {
            @Override
            public void onSuccess(R value) {
                step(() -> then.accept(value));
            }

            @Override
            public void onFailure(Throwable t) {
                failed(t);
            }
        });
    }

    /**
     * Sends one conditional write and hands {@code then} true if it was applied, false if its
     * precondition failed (the document changed since it was read, or exists already for a create), so
     * that the caller can re-read and decide again; any other failure completes the operation.
     */
    public void sendConditional(Supplier<? extends ApiFuture<?>> rpc, Consumer<Boolean> then) {
        sendRaw(rpc::get, new ApiFutureCallback<Object>() {
            @Override
            public void onSuccess(Object value) {
                step(() -> then.accept(true));
            }

            @Override
            public void onFailure(Throwable t) {
                if (!context.isCancelled() && FirestoreErrors.isLostRace(t)) {
                    step(() -> then.accept(false));
                } else {
                    failed(t);
                }
            }
        });
    }

    /** Completes the operation with {@code value}. */
    public void complete(T value) {
        caller.run(() -> result.complete(value));
    }

    /** Completes the operation with {@code error} (a {@link FenceGuardException} from the caller's own checks). */
    public void fail(Throwable error) {
        caller.run(() -> result.completeExceptionally(error));
    }

    @SuppressWarnings("unchecked")
    private <R> void sendRaw(Supplier<? extends ApiFuture<?>> rpc, ApiFutureCallback<R> callback) {
        if (result.isDone()) {
            return;
        }
        ApiFuture<R> future;
        try {
            future = (ApiFuture<R>) context.call(rpc::get);
        } catch (Exception e) {
            failed(e);
            return;
        }
        inFlight = future;
        if (result.isDone()) {
            future.cancel(true); // the deadline passed while the call was being started
            return;
        }
        ApiFutures.addCallback(future, callback, DIRECT);
    }

    /** Runs one step of the chain; a step that throws completes the operation with what it threw. */
    private void step(Runnable body) {
        if (result.isDone()) {
            return;
        }
        try {
            body.run();
        } catch (FenceGuardException | IllegalArgumentException e) {
            fail(e);
        } catch (RuntimeException e) {
            fail(FirestoreErrors.failure(e, subject, operation));
        }
    }

    private void failed(Throwable t) {
        if (result.isDone()) {
            return; // timed out or cancelled already: this is the cancelled call reporting back
        }
        if (context.isCancelled()) {
            timedOut();
        } else if (t instanceof FenceGuardException || t instanceof IllegalArgumentException) {
            fail(t);
        } else {
            fail(FirestoreErrors.failure(t, subject, operation));
        }
    }

    /** The operation's time is up (a no-op if it completed meanwhile). */
    private void timedOut() {
        fail(new FenceGuardException(ErrorCode.TIMEOUT, subject, operation
                + " did not finish within " + timeout + "; the call was cancelled"));
    }
}
