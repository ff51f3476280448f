package dev.fenceguard.core.internal;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;

/**
 * How every blocking face waits on its asynchronous face (the lock client, the primitives, the fenced
 * writes of every module): one copy, so that they all unwrap failures and treat interrupts the same way.
 *
 * <p>Interrupts: a blocking method that declares {@link InterruptedException} throws it, and cancels the
 * stage it waited for, so that nothing acquired for it is kept (whoever bounds the call releases a grant
 * that arrives later). A method that cannot throw it keeps waiting: every stage waited for here is
 * bounded by its own timers (a call or release timeout), and its answer is the truth about the store (a
 * grant, a release, a write that ran); reporting {@code TIMEOUT} instead would pretend the store did not
 * answer. The thread's interrupt status is set again before that method returns or throws.
 */
public final class Stages {

    private Stages() {}

    /** The exception inside a stage's completion wrapper. */
    public static Throwable unwrap(Throwable error) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    /**
     * Waits for {@code future} (which is bounded by its own timers) and returns its value or throws its
     * exception unwrapped (a checked one wrapped in a {@link CompletionException}). An interrupt cancels the
     * future, so that nothing acquired for it is kept, and is thrown.
     */
    public static <T> T await(CompletableFuture<T> future) throws InterruptedException {
        return await(future, Stages::rethrow);
    }

    /**
     * {@link #await(CompletableFuture)}, with a checked failure (neither a {@link RuntimeException} nor an
     * {@link Error}) thrown as {@code checked} makes it.
     */
    public static <T, X extends Exception> T await(CompletableFuture<T> future, Function<Throwable, X> checked)
            throws InterruptedException, X {
        try {
            return future.get();
        } catch (InterruptedException e) {
            future.cancel(false);
            throw e;
        } catch (ExecutionException e) {
            throw failure(e, checked);
        } catch (CancellationException e) {
            throw e;
        }
    }

    /**
     * For a blocking method that cannot throw {@link InterruptedException}: waits until {@code stage}
     * (bounded by its own timers) completes, whatever interrupts come meanwhile, and returns its value or
     * throws its exception unwrapped (a checked one wrapped in a {@link CompletionException}). If the thread
     * was interrupted before or while waiting, its interrupt status is set again before this returns or throws.
     */
    public static <T> T awaitUninterruptibly(CompletionStage<T> stage) {
        return awaitUninterruptibly(stage, Stages::rethrow);
    }

    /**
     * {@link #awaitUninterruptibly(CompletionStage)}, with a checked failure thrown as {@code checked} makes
     * it (a module's own error mapping).
     */
    public static <T, X extends Exception> T awaitUninterruptibly(CompletionStage<T> stage, Function<Throwable, X> checked)
            throws X {
        CompletableFuture<T> future = stage.toCompletableFuture();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return future.get();
                } catch (InterruptedException e) {
                    interrupted = true; // the stage ends by its own timers: wait on, and say so when done
                } catch (ExecutionException e) {
                    throw failure(e, checked);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@code e} to throw: a runtime exception as it is, an error thrown here, anything else wrapped. */
    public static RuntimeException rethrow(Throwable e) {
        if (e instanceof RuntimeException r) {
            return r;
        }
        if (e instanceof Error err) {
            throw err;
        }
        return new CompletionException(e);
    }

    /** The failure of a stage: a runtime exception or error thrown here as it is, anything else as {@code checked} makes it. */
    private static <X extends Exception> X failure(ExecutionException e, Function<Throwable, X> checked) {
        Throwable cause = unwrap(e);
        if (cause instanceof RuntimeException r) {
            throw r;
        }
        if (cause instanceof Error err) {
            throw err;
        }
        return checked.apply(cause);
    }
}
