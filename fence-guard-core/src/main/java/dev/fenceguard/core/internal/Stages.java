package dev.fenceguard.core.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * How every blocking face waits on its asynchronous face: one copy, so that the lock client and the
 * primitives unwrap failures and treat interrupts the same way.
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
        try {
            return future.get();
        } catch (InterruptedException e) {
            future.cancel(false);
            throw e;
        } catch (ExecutionException e) {
            throw rethrow(unwrap(e));
        } catch (CancellationException e) {
            throw e;
        }
    }

    /**
     * {@link #await} for calls whose API cannot be interrupted: keeps the interrupt flag and fails with
     * {@link ErrorCode#TIMEOUT} about {@code key} (null for none).
     */
    public static <T> T awaitUninterruptibly(CompletableFuture<T> future, String key, String operation) {
        try {
            return await(future);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FenceGuardException(ErrorCode.TIMEOUT, key, operation + " was interrupted while waiting", e);
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
}
