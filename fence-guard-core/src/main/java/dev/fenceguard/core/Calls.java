package dev.fenceguard.core;

import dev.fenceguard.core.internal.Stages;
import dev.fenceguard.core.internal.Timer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** Backend calls bounded in time, and the blocking wait of the blocking face. */
final class Calls {

    private Calls() {}

    /**
     * Sends {@code call} and returns a future that completes with its answer, or with a
     * {@code TIMEOUT} {@link FenceGuardException} once {@code timeout} has passed on {@code time},
     * whichever comes first. No thread waits meanwhile: a timer completes the future. An answer that
     * arrives after the future was completed otherwise (timed out, or cancelled by the caller) goes to
     * {@code late}, so a grant or extension nobody is waiting for can be undone.
     */
    static <T> CompletableFuture<T> bounded(TimeSource time, Duration timeout, LockKey key, String operation,
            Supplier<? extends CompletionStage<T>> call, Consumer<T> late) {
        return bounded(time, timeout, key.value(), operation, call, late);
    }

    /** {@link #bounded(TimeSource, Duration, LockKey, String, Supplier, Consumer)} for a call about no key ({@code key} null). */
    static <T> CompletableFuture<T> bounded(TimeSource time, Duration timeout, String key, String operation,
            Supplier<? extends CompletionStage<T>> call, Consumer<T> late) {
        Supplier<FenceGuardException> timedOut = () -> new FenceGuardException(ErrorCode.TIMEOUT,
                key, operation + " got no answer within " + timeout + "; gave up waiting");
        if (time == SystemTimeSource.INSTANCE) {
            return Timer.bounded(timeout, timedOut, call, late); // no arming function made per call
        }
        return Timer.bounded(onExpiry -> bound(time, timeout, onExpiry), timedOut, call, late);
    }

    /**
     * On the system clock, the process's one sweep timer ({@link Timer#deadlines()}): a timer task per call
     * woke the timer thread on most calls. Other time sources (manual clocks in tests) get a task per call
     * through {@link TimeSource#schedule}.
     */
    private static Timer.Bound bound(TimeSource time, Duration timeout, Runnable onExpiry) {
        if (time == SystemTimeSource.INSTANCE) {
            return Timer.bound(timeout, onExpiry);
        }
        Future<?> task = time.schedule(timeout, onExpiry);
        return () -> task.cancel(false);
    }

    /** The exception inside a stage's completion wrapper. */
    static Throwable unwrap(Throwable error) {
        return Stages.unwrap(error);
    }

    /** See {@link Stages#await}. */
    static <T> T await(CompletableFuture<T> future) throws InterruptedException {
        return Stages.await(future);
    }

    /** See {@link Stages#awaitUninterruptibly(CompletionStage)}. */
    static <T> T awaitUninterruptibly(CompletionStage<T> stage) {
        return Stages.awaitUninterruptibly(stage);
    }

    static RuntimeException rethrow(Throwable e) {
        return Stages.rethrow(e);
    }
}
