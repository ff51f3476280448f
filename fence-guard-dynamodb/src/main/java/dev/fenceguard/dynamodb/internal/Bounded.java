package dev.fenceguard.dynamodb.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.Timer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One deadline over a chain of SDK calls (a conditional write, then the read after a failed condition,
 * then a second write). DynamoDB takes no deadline of its own, so the timeout is kept here, in two steps on
 * fence-guard's one timer thread (nothing here waits):
 * <ul>
 *   <li>at {@code timeout}, the chain sends nothing more (a call it would still make fails with
 *       {@code TIMEOUT}), but the request already out may still answer for a {@code grace};</li>
 *   <li>after the grace, a request still out is taken for lost: the stage fails with {@code TIMEOUT} and
 *       the request is cancelled, which aborts its HTTP exchange and frees its connection. Whatever it did
 *       is then unknown to anyone.</li>
 * </ul>
 * The lock backend's calls take {@link #LATE_ANSWERS} of grace, as {@code LockBackend} asks of every backend
 * (its stage completes with what the server answered, even after the timeout, so that the lock client can
 * undo a grant or an extension nobody waits for any more). Cancelling at the timeout itself, as the lock
 * backend once did, dropped answers that were on the wire: a grant made just before the deadline stayed held,
 * unknown to its client, until its TTL ran out. The fenced writes, idempotency entries and flights promise to
 * end by their timeout and take none.
 *
 * @param <T> what the chain answers
 */
public final class Bounded<T> {

    /**
     * How long past its timeout a lock call's answer is still taken: DynamoDB answers in milliseconds, so
     * an answer later than this is from a connection that stopped answering, and waiting on frees nothing.
     */
    public static final Duration LATE_ANSWERS = Duration.ofSeconds(2);

    private final CompletableFuture<T> out = new CompletableFuture<>();
    private final AtomicReference<CompletableFuture<?>> current = new AtomicReference<>();
    private final String subject;
    private final String operation;
    private final Duration timeout;
    private final Duration grace;
    /** Set on the timer thread at the timeout; read by whichever thread sends the chain's next call. */
    private volatile boolean late;
    private volatile Timer.Bound bound;

    private Bounded(String subject, String operation, Duration timeout, Duration grace) {
        this.subject = subject;
        this.operation = operation;
        this.timeout = timeout;
        this.grace = grace;
    }

    /**
     * Runs {@code body}, which sends its calls through {@link #send}, under one deadline of {@code timeout}
     * and no grace: the stage fails with {@code TIMEOUT} at the timeout. Failures other than a
     * {@link FenceGuardException} are mapped by {@link DynamoDbErrors#failure}.
     */
    public static <T> CompletableFuture<T> run(Duration timeout, String subject, String operation,
            Function<Bounded<T>, ? extends CompletionStage<T>> body) {
        return run(timeout, Duration.ZERO, subject, operation, body);
    }

    /**
     * {@link #run(Duration, String, String, Function)} whose request out at the timeout may still answer
     * for {@code grace} ({@link #LATE_ANSWERS} for the lock backend).
     */
    public static <T> CompletableFuture<T> run(Duration timeout, Duration grace, String subject, String operation,
            Function<Bounded<T>, ? extends CompletionStage<T>> body) {
        Bounded<T> chain = new Bounded<>(subject, operation, timeout, grace);
        chain.bound = Timer.bound(timeout, chain::timedOut);
        CompletionStage<T> stage;
        try {
            stage = body.apply(chain);
        } catch (RuntimeException | Error e) {
            chain.bound.lift();
            chain.out.completeExceptionally(e instanceof RuntimeException r ? DynamoDbErrors.failure(r, subject, operation) : e);
            return chain.out;
        }
        stage.whenComplete((value, error) -> {
            chain.bound.lift();
            if (error != null) {
                chain.out.completeExceptionally(DynamoDbErrors.failure(error, subject, operation));
            } else {
                chain.out.complete(value);
            }
        });
        return chain.out;
    }

    /** The timeout passed: no more calls; the one out has the grace to answer. */
    private void timedOut() {
        late = true;
        if (grace.isZero()) {
            abandoned();
            return;
        }
        // If the answer lands meanwhile, its lift may miss this bound; it then fires on a completed stage and does nothing.
        bound = Timer.bound(grace, this::abandoned);
    }

    /** The request out did not answer within the grace: fail the stage and abort the request. */
    private void abandoned() {
        if (out.completeExceptionally(new FenceGuardException(ErrorCode.TIMEOUT, subject, operation
                + " got no answer from DynamoDB within " + timeout + (grace.isZero() ? "" : " (and " + grace.toMillis() + " ms more)")
                + "; it may still have been applied"))) {
            CompletableFuture<?> call = current.get();
            if (call != null) {
                call.cancel(true);
            }
        }
    }

    /** Sends one SDK call of the chain; once the chain's time is out, sends nothing and fails with {@code TIMEOUT}. */
    public <R> CompletableFuture<R> send(Supplier<CompletableFuture<R>> call) {
        if (late || out.isDone()) {
            return CompletableFuture.failedFuture(new FenceGuardException(ErrorCode.TIMEOUT, subject, operation
                    + " ran out of its " + timeout + " before its next request to DynamoDB; the requests before it may have been applied"));
        }
        CompletableFuture<R> sent = call.get();
        current.set(sent);
        if (out.isDone()) {
            sent.cancel(true);
        }
        return sent;
    }
}
