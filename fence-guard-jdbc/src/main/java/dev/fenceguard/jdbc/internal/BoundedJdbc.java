package dev.fenceguard.jdbc.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.Redacted;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs blocking JDBC work on an executor and bounds it in time, so the caller's thread never waits.
 *
 * <p>Three layers bound a call. The work itself asks the server to give up by the deadline (it gets
 * the time left, for {@code lock_timeout}/{@code statement_timeout}). A timer completes the future
 * with {@code TIMEOUT} at the deadline whatever the work is doing. And a call still running
 * {@link #ABORT_GRACE} after its deadline has its connection aborted ({@link Connection#abort}): a
 * server that stopped answering (paused, network gone silent) cannot cancel a statement, and without
 * the abort the executor's thread and a pool connection would wait in a socket read until TCP gives up.
 */
public final class BoundedJdbc {

    private static final Logger log = LoggerFactory.getLogger(BoundedJdbc.class);

    /**
     * How long after its deadline a call may still be running before its connection is aborted. The
     * server-side timeouts end a call on a live server within milliseconds of the deadline; this is
     * for servers that do not answer at all.
     */
    public static final Duration ABORT_GRACE = Duration.ofMillis(500);

    /** The default executor: a new virtual thread per call, named for thread dumps. */
    public static final Executor VIRTUAL_THREADS = new Executor() {
        private final ThreadFactory threads = Thread.ofVirtual().name("fence-guard-jdbc-", 0).factory();

        @Override
        public void execute(Runnable task) {
            threads.newThread(task).start();
        }

        @Override
        public String toString() {
            return "virtual thread per call";
        }
    };

    /** Work on a connection, given the milliseconds left before the call's deadline (at least 1). */
    public interface Work<T> {
        T apply(Connection c, TimeLeft left) throws SQLException;
    }

    /** The time a call has left, read when a statement is about to be sent. */
    public interface TimeLeft {
        /**
         * Whole milliseconds left before the deadline, at least 1 and at most {@link Integer#MAX_VALUE}
         * (the range of PostgreSQL's timeout settings, where 0 would mean "none").
         */
        int millis();
    }

    /** One daemon thread for every backend in the JVM: call deadlines and aborts, nothing that blocks. */
    private static final class Timer {
        static final ScheduledThreadPoolExecutor TIMER;

        static {
            TIMER = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "fence-guard-jdbc-timer");
                t.setDaemon(true);
                return t;
            });
            TIMER.setRemoveOnCancelPolicy(true); // finished calls must not leave their timers queued
        }
    }

    /** Maps what a call ended with to a {@link FenceGuardException}, by the database's own error codes. */
    public interface Errors {
        FenceGuardException map(Throwable e, String key, String operation);
    }

    private final DataSource dataSource;
    private final Executor executor;
    private final Errors errors;

    /** Calls on PostgreSQL, errors mapped by {@link PgErrors}. */
    public BoundedJdbc(DataSource dataSource, Executor executor) {
        this(dataSource, executor, PgErrors::map);
    }

    public BoundedJdbc(DataSource dataSource, Executor executor, Errors errors) {
        this.dataSource = dataSource;
        this.executor = executor;
        this.errors = errors;
    }

    /**
     * Runs {@code work} on its own connection (committed if the pool turned auto-commit off) on the
     * executor, and returns at once.
     *
     * @param key the lock key, for errors
     * @param operation what the call does, for errors, e.g. {@code acquire on "public"."locks"}
     * @param timeout the call's bound, positive
     * @param late receives a result that arrived after the future was completed otherwise (timed out),
     *     so it can be undone; may be null
     * @return a future that fails with a {@link FenceGuardException}: mapped by the {@link Errors} from
     *     the driver's error, or {@code TIMEOUT} at the deadline
     */
    public <T> CompletableFuture<T> submit(String key, String operation, Duration timeout, Work<T> work, Consumer<T> late) {
        Call<T> call = new Call<>(key, operation, System.nanoTime() + timeout.toNanos(), work, late);
        call.timer = Timer.TIMER.schedule(() -> call.expire(new FenceGuardException(ErrorCode.TIMEOUT, key,
                operation + " got no answer within its timeout of " + timeout.toMillis() + " ms; gave up")),
                timeout.toNanos(), TimeUnit.NANOSECONDS);
        try {
            executor.execute(call::run);
        } catch (RejectedExecutionException e) {
            call.timer.cancel(false);
            call.out.completeExceptionally(new FenceGuardException(ErrorCode.UNAVAILABLE, key,
                    operation + " was refused by the backend's executor (" + executor + ")", e));
        }
        return call.out;
    }

    /** One call: its future, its connection while it has one, its timer. */
    private final class Call<T> {
        final CompletableFuture<T> out = new CompletableFuture<>();
        final String key;
        final String operation;
        final long deadlineNanos;
        final Work<T> work;
        final Consumer<T> late;
        volatile ScheduledFuture<?> timer;
        /** The connection in use; guarded by {@code this}, so an abort never reaches one back in the pool. */
        private Connection connection;
        private boolean finished;

        Call(String key, String operation, long deadlineNanos, Work<T> work, Consumer<T> late) {
            this.key = key;
            this.operation = operation;
            this.deadlineNanos = deadlineNanos;
            this.work = work;
            this.late = late;
        }

        void run() {
            try {
                if (out.isDone()) {
                    return; // timed out while queued on a busy executor: send nothing
                }
                Optional<T> result = onOwnConnection();
                if (result.isPresent() && !out.complete(result.get()) && late != null) {
                    late.accept(result.get());
                }
            } catch (SQLException | RuntimeException e) {
                out.completeExceptionally(errors.map(e, key, operation));
            } catch (Error e) {
                out.completeExceptionally(new FenceGuardException(ErrorCode.INTERNAL, key,
                        operation + " failed: " + e.getClass().getName(), Redacted.chain(e, 0)));
                throw e;
            } finally {
                synchronized (this) {
                    finished = true;
                }
                ScheduledFuture<?> t = timer;
                if (t != null) {
                    t.cancel(false);
                }
            }
        }

        /** The work's result, or empty if the call timed out while waiting for a connection (nothing sent). */
        private Optional<T> onOwnConnection() throws SQLException {
            try (Connection c = dataSource.getConnection()) {
                synchronized (this) {
                    connection = c;
                }
                try {
                    if (out.isDone()) {
                        return Optional.empty();
                    }
                    boolean autoCommit = c.getAutoCommit();
                    try {
                        T result = work.apply(c, this::millisLeft);
                        if (!autoCommit) {
                            c.commit();
                        }
                        return Optional.of(result);
                    } catch (SQLException | RuntimeException e) {
                        if (!autoCommit) {
                            rollbackQuietly(c);
                        }
                        throw e;
                    }
                } finally {
                    synchronized (this) {
                        connection = null;
                    }
                }
            }
        }

        private int millisLeft() {
            long left = (deadlineNanos - System.nanoTime()) / 1_000_000;
            return (int) Math.max(1, Math.min(Integer.MAX_VALUE, left));
        }

        /**
         * At the deadline: fail the future and arm the abort. Runs on the timer thread rather than the
         * executor, so a saturated executor cannot delay a timeout; what depends on the future must not
         * block (the lock client's continuations do not).
         */
        void expire(FenceGuardException timeout) {
            synchronized (this) {
                if (finished) {
                    return;
                }
            }
            out.completeExceptionally(timeout);
            Timer.TIMER.schedule(this::abortIfRunning, ABORT_GRACE.toNanos(), TimeUnit.NANOSECONDS);
        }

        private void abortIfRunning() {
            synchronized (this) {
                if (finished || connection == null) {
                    return;
                }
                try {
                    log.debug("aborting a connection whose call ran {} ms past its deadline", ABORT_GRACE.toMillis());
                    // Closing the socket is quick, and must not wait for a slot on a busy executor.
                    connection.abort(Runnable::run);
                } catch (SQLException | RuntimeException e) {
                    log.debug("could not abort a connection past its deadline: {}", e.getClass().getName());
                }
            }
        }
    }

    /**
     * Logs the end of {@code release}, the release of a grant that arrived after its call had timed out and
     * so reached nobody (freed rather than left to its TTL).
     */
    public static void undoneLateGrant(java.util.concurrent.CompletionStage<Boolean> release, dev.fenceguard.core.LockKey key,
            dev.fenceguard.core.LockId lockId) {
        release.whenComplete((released, error) -> log.debug("lock '{}' (lock {}): late grant undone: {}",
                key, lockId.redacted(), error == null ? released : Redacted.describe(error)));
    }

    /**
     * {@code work} in a transaction that is always rolled back, the connection's auto-commit restored
     * afterwards: the lock backends' warm-ups, which run real statements and must keep nothing.
     */
    public static <T> Work<T> rolledBack(Work<T> work) {
        return (c, left) -> {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                return work.apply(c, left);
            } finally {
                c.rollback(); // the point: nothing of the work is kept
                c.setAutoCommit(autoCommit);
            }
        };
    }

    private static void rollbackQuietly(Connection c) {
        try {
            c.rollback();
        } catch (SQLException e) {
            // The connection is likely broken (aborted, server gone); the original failure says more.
        }
    }
}
