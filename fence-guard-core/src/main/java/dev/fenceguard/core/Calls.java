package dev.fenceguard.core;

import dev.fenceguard.core.internal.Deadlines;
import dev.fenceguard.core.internal.Stages;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** Backend calls bounded in time, and the blocking wait of the blocking face. */
final class Calls {

    /**
     * The bounds of calls on the system clock: one sweep timer for every call in flight, since a timer
     * task per call woke the timer thread on most calls (see {@link Deadlines}). Sweeps run on the
     * {@code fence-guard-timer} thread, so a call that times out completes there, as before. Other time
     * sources (manual clocks in tests) get a task per call through {@link TimeSource#schedule}.
     */
    private static final Deadlines DEADLINES = new Deadlines(System::nanoTime,
            (delayNanos, sweep) -> SystemTimeSource.INSTANCE.schedule(Duration.ofNanos(delayNanos), sweep));
    /** Bounds beyond this (about 73 years) are waited as this, so that deadlines cannot overflow. */
    private static final long LONGEST_NANOS = Long.MAX_VALUE / 4;

    /** A bound that can be lifted once the answer is in. */
    private interface Bound {
        void lift();
    }

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
        CompletableFuture<T> out = new CompletableFuture<>();
        // The bound starts before the request leaves: whoever sees the request sent also sees its timer set.
        Bound timer = bound(time, timeout, () -> out.completeExceptionally(new FenceGuardException(ErrorCode.TIMEOUT,
                key, operation + " got no answer within " + timeout + "; gave up waiting")));
        CompletionStage<T> raw;
        try {
            raw = Objects.requireNonNull(call.get(), "the backend returned no stage for " + operation);
        } catch (RuntimeException | Error e) {
            // An Error too (an assertion, a blocking-call detector): on a timer thread it would otherwise
            // end the retry or renewal chain silently and leave the caller's stage pending for ever.
            timer.lift();
            if (e instanceof VirtualMachineError vm) {
                throw vm;
            }
            return CompletableFuture.failedFuture(e);
        }
        raw.whenComplete((value, error) -> {
            timer.lift();
            boolean taken = error != null ? out.completeExceptionally(unwrap(error)) : out.complete(value);
            if (!taken && error == null && late != null) {
                late.accept(value);
            }
        });
        return out;
    }

    private static Bound bound(TimeSource time, Duration timeout, Runnable onExpiry) {
        if (time == SystemTimeSource.INSTANCE) {
            long nanos = timeout.compareTo(Duration.ofNanos(LONGEST_NANOS)) > 0 ? LONGEST_NANOS : timeout.toNanos();
            Deadlines.Entry deadline = DEADLINES.add(System.nanoTime() + nanos, onExpiry);
            return () -> DEADLINES.remove(deadline);
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

    /** See {@link Stages#awaitUninterruptibly}. */
    static <T> T awaitUninterruptibly(CompletableFuture<T> future, LockKey key, String operation) {
        return Stages.awaitUninterruptibly(future, key.value(), operation);
    }

    /** {@link #awaitUninterruptibly(CompletableFuture, LockKey, String)} for a call about no key ({@code key} null). */
    static <T> T awaitUninterruptibly(CompletableFuture<T> future, String key, String operation) {
        return Stages.awaitUninterruptibly(future, key, operation);
    }

    static RuntimeException rethrow(Throwable e) {
        return Stages.rethrow(e);
    }
}
