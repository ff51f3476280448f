package dev.fenceguard.core.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The one thread of a process that does fence-guard's time-based work, like HikariCP's single
 * housekeeping thread: backoff and renewal tasks, the sweeps of {@link #deadlines()} that end calls at
 * their timeout, the JDBC backends' connection aborts and the Firestore backends' gRPC deadlines. Every
 * module uses this one, so a process has one {@code fence-guard-timer} thread whatever backends it runs.
 * Its tasks only complete futures and send requests: they never block.
 */
public final class Timer {

    /** Bounds beyond this (about 73 years) are waited as this, so that deadlines cannot overflow. */
    private static final long LONGEST_NANOS = Long.MAX_VALUE / 4;

    private Timer() {}

    /** Created on first use, so that a process that never uses fence-guard's timing starts no thread. */
    private static final class Holder {
        static final ScheduledThreadPoolExecutor EXECUTOR = create();
        /** Per-call deadlines: a set and one armed sweep, not a task per call (see {@link Deadlines}). */
        static final Deadlines DEADLINES = new Deadlines(System::nanoTime,
                (delayNanos, sweep) -> EXECUTOR.schedule(sweep, delayNanos, TimeUnit.NANOSECONDS));

        private static ScheduledThreadPoolExecutor create() {
            ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "fence-guard-timer");
                t.setDaemon(true);
                return t;
            });
            executor.setRemoveOnCancelPolicy(true); // 10,000 cancelled renewals must not pile up
            return executor;
        }
    }

    /** Runs {@code task} once after {@code delay} (at once if not positive) on the timer thread. */
    public static Future<?> schedule(Duration delay, Runnable task) {
        return Holder.EXECUTOR.schedule(task, Math.max(0, nanos(delay)), TimeUnit.NANOSECONDS);
    }

    /**
     * The timer as an executor service, for libraries that take one to run their own deadlines on (gRPC's
     * {@code Context.withDeadline}). Never shut it down.
     */
    public static ScheduledExecutorService executor() {
        return Holder.EXECUTOR;
    }

    /** The process's call deadlines, swept on the timer thread. */
    public static Deadlines deadlines() {
        return Holder.DEADLINES;
    }

    /** A deadline registered with {@link #deadlines()} that can be lifted once the answer is in. */
    public interface Bound {
        void lift();
    }

    /** Runs {@code onExpiry} on the timer thread once {@code timeout} has passed, unless lifted first. */
    public static Bound bound(Duration timeout, Runnable onExpiry) {
        Deadlines.Entry deadline = Holder.DEADLINES.add(System.nanoTime() + nanos(timeout), onExpiry);
        return () -> Holder.DEADLINES.remove(deadline);
    }

    /**
     * Sends {@code call} and returns a future that completes with its answer, or with what
     * {@code timedOut} gives once {@code timeout} has passed, whichever comes first. No thread waits
     * meanwhile. An answer that arrives after the future was completed otherwise (timed out, or
     * cancelled by the caller) goes to {@code late} (if not null), so that what it did can be undone:
     * the one place where a caller learns of an answer it gave up on.
     *
     * @param arm sets the bound (for example {@link #bound}); given the action to run at expiry
     */
    public static <T> CompletableFuture<T> bounded(Function<Runnable, Bound> arm,
            Supplier<? extends RuntimeException> timedOut, Supplier<? extends CompletionStage<T>> call,
            Consumer<? super T> late) {
        CompletableFuture<T> out = new CompletableFuture<>();
        // The bound starts before the request leaves: whoever sees the request sent also sees its timer set.
        Bound bound = arm.apply(() -> out.completeExceptionally(timedOut.get()));
        CompletionStage<T> raw;
        try {
            raw = Objects.requireNonNull(call.get(), "the store returned no stage");
        } catch (RuntimeException | Error e) {
            // An Error too (an assertion, a blocking-call detector): on a timer thread it would otherwise
            // end the retry or renewal chain silently and leave the caller's stage pending for ever.
            bound.lift();
            if (e instanceof VirtualMachineError vm) {
                throw vm;
            }
            return CompletableFuture.failedFuture(e);
        }
        raw.whenComplete((value, error) -> {
            bound.lift();
            boolean taken = error != null ? out.completeExceptionally(unwrap(error)) : out.complete(value);
            if (!taken && error == null && late != null) {
                late.accept(value);
            }
        });
        return out;
    }

    /** The exception inside a stage's completion wrapper. */
    public static Throwable unwrap(Throwable error) {
        return Stages.unwrap(error);
    }

    private static long nanos(Duration d) {
        return d.compareTo(Duration.ofNanos(LONGEST_NANOS)) > 0 ? LONGEST_NANOS : d.toNanos();
    }
}
