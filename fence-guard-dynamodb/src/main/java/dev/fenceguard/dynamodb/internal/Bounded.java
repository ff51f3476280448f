package dev.fenceguard.dynamodb.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.Timer;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One deadline over a chain of SDK calls (a conditional write, then the read after a failed condition,
 * then a second write): the chain's stage fails with {@code TIMEOUT} at the deadline, and the SDK call
 * still out is cancelled then, which aborts its HTTP request. The deadline runs on fence-guard's one timer
 * thread; nothing here waits.
 *
 * @param <T> what the chain answers
 */
public final class Bounded<T> {

    private final CompletableFuture<T> out = new CompletableFuture<>();
    private final AtomicReference<CompletableFuture<?>> current = new AtomicReference<>();

    private Bounded() {}

    /**
     * Runs {@code body}, which sends its calls through {@link #send}, under one deadline of {@code timeout}.
     * Failures other than a {@link FenceGuardException} are mapped by {@link DynamoDbErrors#failure}.
     */
    public static <T> CompletableFuture<T> run(Duration timeout, String subject, String operation,
            Function<Bounded<T>, ? extends CompletionStage<T>> body) {
        Bounded<T> chain = new Bounded<>();
        Timer.Bound bound = Timer.bound(timeout, () -> {
            if (chain.out.completeExceptionally(new FenceGuardException(ErrorCode.TIMEOUT, subject,
                    operation + " got no answer from DynamoDB within " + timeout + "; it may still have been applied"))) {
                CompletableFuture<?> call = chain.current.get();
                if (call != null) {
                    call.cancel(true);
                }
            }
        });
        CompletionStage<T> stage;
        try {
            stage = body.apply(chain);
        } catch (RuntimeException | Error e) {
            bound.lift();
            chain.out.completeExceptionally(e instanceof RuntimeException r ? DynamoDbErrors.failure(r, subject, operation) : e);
            return chain.out;
        }
        stage.whenComplete((value, error) -> {
            bound.lift();
            if (error != null) {
                chain.out.completeExceptionally(DynamoDbErrors.failure(error, subject, operation));
            } else {
                chain.out.complete(value);
            }
        });
        return chain.out;
    }

    /** Sends one SDK call of the chain; once the chain has ended (timed out), sends nothing. */
    public <R> CompletableFuture<R> send(Supplier<CompletableFuture<R>> call) {
        if (out.isDone()) {
            return CompletableFuture.failedFuture(new CancellationException("the call already ended"));
        }
        CompletableFuture<R> sent = call.get();
        current.set(sent);
        if (out.isDone()) {
            sent.cancel(true);
        }
        return sent;
    }
}
