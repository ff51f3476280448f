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
import java.util.function.BiConsumer;
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
    private static final Duration LONGEST = Duration.ofNanos(LONGEST_NANOS);

    private Timer() {}

    /** The timer's thread, once it has one (a thread that dies is replaced, and this with it). */
    private static volatile Thread thread;

    /** Whether {@code t} is the timer's thread, on which nothing may block (see {@link CallerThread}). */
    public static boolean isTimerThread(Thread t) {
        return t == thread;
    }

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
                thread = t;
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
        BoundedCall<T> out = new BoundedCall<>(timedOut, late);
        // The bound starts before the request leaves: whoever sees the request sent also sees its timer set.
        out.bound = arm.apply(out);
        return out.send(call);
    }

    /**
     * As {@link #bounded(Function, Supplier, Supplier, Consumer)}, bounded by {@code timeout} on the process's
     * {@link #deadlines()} (what {@link #bound} arms): the bound of nearly every call, with no arming
     * function and no handle to lift it made per call.
     */
    public static <T> CompletableFuture<T> bounded(Duration timeout, Supplier<? extends RuntimeException> timedOut,
            Supplier<? extends CompletionStage<T>> call, Consumer<? super T> late) {
        BoundedCall<T> out = new BoundedCall<>(timedOut, late);
        out.deadline = Holder.DEADLINES.add(System.nanoTime() + nanos(timeout), out);
        return out.send(call);
    }

    /**
     * A bounded call's future, its action at expiry and the callback of its answer in one object: every call
     * of every store runs through here, and three lambdas beside a future were four allocations per call
     * (issue #31). Not for users to run: {@link Runnable} and {@link BiConsumer} are its callbacks.
     */
    private static final class BoundedCall<T> extends CompletableFuture<T> implements Runnable, BiConsumer<T, Throwable> {
        private final Supplier<? extends RuntimeException> timedOut;
        private final Consumer<? super T> late;
        // One of the two is set, before the call is sent; whenComplete publishes it to the answering thread.
        private Deadlines.Entry deadline;
        private Bound bound;

        BoundedCall(Supplier<? extends RuntimeException> timedOut, Consumer<? super T> late) {
            this.timedOut = timedOut;
            this.late = late;
        }

        CompletableFuture<T> send(Supplier<? extends CompletionStage<T>> call) {
            CompletionStage<T> raw;
            try {
                raw = Objects.requireNonNull(call.get(), "the store returned no stage");
            } catch (RuntimeException | Error e) {
                // An Error too (an assertion, a blocking-call detector): on a timer thread it would otherwise
                // end the retry or renewal chain silently and leave the caller's stage pending for ever.
                lift();
                if (e instanceof VirtualMachineError vm) {
                    throw vm;
                }
                return CompletableFuture.failedFuture(e);
            }
            raw.whenComplete(this);
            return this;
        }

        /** The bound expired. */
        @Override
        public void run() {
            completeExceptionally(timedOut.get());
        }

        /** The answer. */
        @Override
        public void accept(T value, Throwable error) {
            lift();
            boolean taken = error != null ? completeExceptionally(unwrap(error)) : complete(value);
            if (!taken && error == null && late != null) {
                late.accept(value);
            }
        }

        private void lift() {
            if (deadline != null) {
                Holder.DEADLINES.remove(deadline);
            } else {
                bound.lift();
            }
        }
    }

    /** The exception inside a stage's completion wrapper. */
    public static Throwable unwrap(Throwable error) {
        return Stages.unwrap(error);
    }

    private static long nanos(Duration d) {
        return d.compareTo(LONGEST) > 0 ? LONGEST_NANOS : d.toNanos();
    }
}
