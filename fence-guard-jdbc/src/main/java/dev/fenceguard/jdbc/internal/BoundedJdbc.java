package dev.fenceguard.jdbc.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.CallerThread;
import dev.fenceguard.core.internal.Redacted;
import dev.fenceguard.core.internal.Timer;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs blocking JDBC work on an executor, so the caller's thread never waits, and makes the server give
 * up by the call's timeout: the backends' half of the timeout contract of
 * {@link dev.fenceguard.core.spi.LockBackend}.
 *
 * <p>The work asks the server to give up by the deadline (it gets the time left, for
 * {@code lock_timeout}/{@code statement_timeout} or {@code max_statement_time}), and the call completes
 * with what the server answered, even after the deadline; nothing here completes it at the deadline or
 * undoes a late answer: the caller (the lock client, the primitives) times out its own caller and
 * releases a late grant. One thing only runs on time: a call still running {@link #ABORT_GRACE} after
 * its deadline has its connection aborted ({@link Connection#abort}), because a server that stopped
 * answering (paused, network gone silent) cannot cancel a statement, and without the abort the
 * executor's thread and a pool connection would wait in a socket read until TCP gives up. That abort
 * is a deadline on the process's one timer ({@link Timer#deadlines()}), not a timer of this module.
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
     * @param timeout the call's bound, positive: handed to the server by the work, and the start of
     *     {@link #ABORT_GRACE}
     * @return a future that completes with the work's result, or fails with a {@link FenceGuardException}
     *     mapped by the {@link Errors} from the driver's error ({@code TIMEOUT} for the server's own
     *     timeouts), or {@code TIMEOUT} if the deadline passed before anything was sent; already complete
     *     when a blocking face lent its thread ({@link CallerThread}) and the executor is the default one
     */
    public <T> CompletableFuture<T> submit(String key, String operation, Duration timeout, Work<T> work) {
        Call<T> call = new Call<>(key, operation, timeout, work);
        if (executor == VIRTUAL_THREADS && CallerThread.take()) {
            // A blocking face waits for this call on its own platform thread: run it there (CallerThread).
            call.runHere();
            return call;
        }
        call.abort = Timer.bound(timeout.plus(ABORT_GRACE), call::abortIfRunning);
        try {
            executor.execute(call);
        } catch (RejectedExecutionException e) {
            call.abort.lift();
            call.completeExceptionally(new FenceGuardException(ErrorCode.UNAVAILABLE, key,
                    operation + " was refused by the backend's executor (" + executor + ")", e));
        }
        return call;
    }

    /**
     * One call: its caller's future, the task the executor runs and the time left its work reads, in one
     * object (issue #31: a future and two method references beside it were three allocations per call);
     * its connection while it has one, and its abort deadline.
     */
    private final class Call<T> extends CompletableFuture<T> implements Runnable, TimeLeft {
        final String key;
        final String operation;
        final Duration timeout;
        final long deadlineNanos;
        final Work<T> work;
        volatile Timer.Bound abort;
        /** The connection in use; guarded by {@code this}, so an abort never reaches one back in the pool. */
        private Connection connection;
        private boolean finished;
        /** The lending caller's thread, when the call runs on it ({@link #runHere}); else null. */
        private Thread lender;
        /** Guarded by {@code this}: the lender is waiting for a connection, and may be interrupted at the deadline. */
        private boolean waitingForConnection;
        /** Guarded by {@code this}: the deadline interrupted the lender's wait for a connection. */
        private boolean interruptedAtDeadline;
        /** The lender was interrupted while waiting for a connection: its interrupt is set again at the end. */
        private boolean lenderInterrupted;

        Call(String key, String operation, Duration timeout, Work<T> work) {
            this.key = key;
            this.operation = operation;
            this.timeout = timeout;
            this.deadlineNanos = System.nanoTime() + timeout.toNanos();
            this.work = work;
        }

        /**
         * Runs the call on the lending caller's thread. At the deadline, a wait for a pool connection is
         * interrupted (a pool's own timeout can be far longer than the call's: the call then fails
         * {@code TIMEOUT}, nothing sent) and anything else gets {@link #ABORT_GRACE} more, as on the executor.
         */
        void runHere() {
            lender = Thread.currentThread();
            abort = Timer.bound(timeout, this::atDeadline);
            run();
        }

        private void atDeadline() {
            synchronized (this) {
                if (finished) {
                    return;
                }
                if (waitingForConnection) {
                    interruptedAtDeadline = true;
                    lender.interrupt();
                    return;
                }
            }
            // Sent: the server's own timeouts end the statement now; this is for a server that does not answer.
            // If the call ends meanwhile, the abort finds it finished.
            abort = Timer.bound(ABORT_GRACE, this::abortIfRunning);
        }

        @Override
        public void run() {
            try {
                Optional<T> result = pastDeadline() ? Optional.empty() : onOwnConnection();
                if (result.isPresent()) {
                    complete(result.get());
                } else {
                    completeExceptionally(new FenceGuardException(ErrorCode.TIMEOUT, key, operation
                            + " could not be sent within its timeout of " + timeout.toMillis() + " ms (busy executor or pool)"));
                }
            } catch (SQLException | RuntimeException e) {
                completeExceptionally(errors.map(e, key, operation));
            } catch (Error e) {
                completeExceptionally(new FenceGuardException(ErrorCode.INTERNAL, key,
                        operation + " failed: " + e.getClass().getName(), Redacted.chain(e, 0)));
                throw e;
            } finally {
                synchronized (this) {
                    finished = true;
                }
                Timer.Bound a = abort;
                if (a != null) {
                    a.lift();
                }
                if (lenderInterrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** Whether the call's time ran out before it could send anything (queued on the executor or the pool). */
        private boolean pastDeadline() {
            return deadlineNanos - System.nanoTime() <= 0;
        }

        /** The work's result, or empty if the call timed out while waiting for a connection (nothing sent). */
        private Optional<T> onOwnConnection() throws SQLException {
            Connection pooled = lender == null ? dataSource.getConnection() : lentConnection();
            if (pooled == null) {
                return Optional.empty();
            }
            try (Connection c = pooled) {
                synchronized (this) {
                    connection = c;
                }
                try {
                    if (pastDeadline()) {
                        return Optional.empty();
                    }
                    boolean autoCommit = c.getAutoCommit();
                    try {
                        T result = work.apply(c, this);
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

        /**
         * A connection for a call on the lender's thread, or null if the deadline passed while waiting for it.
         * The lender's own interrupts do not end the wait (they would not on the executor either): they are
         * set again once the call is done ({@link #run}).
         */
        private Connection lentConnection() throws SQLException {
            while (true) {
                synchronized (this) {
                    if (pastDeadline()) {
                        return null;
                    }
                    waitingForConnection = true;
                }
                Connection c = null;
                SQLException failure = null;
                try {
                    c = dataSource.getConnection();
                } catch (SQLException e) {
                    failure = e;
                }
                synchronized (this) {
                    waitingForConnection = false;
                    if (interruptedAtDeadline) {
                        // The deadline's interrupt, cleared. (A caller's interrupt in the same instant is lost with
                        // it: the two cannot be told apart.) A connection that came anyway is let go by the caller,
                        // which finds the deadline past.
                        Thread.interrupted();
                        return c;
                    }
                }
                if (failure == null) {
                    return c;
                }
                // The caller's own interrupt (a pool sets the flag again, or names it as the cause): wait on, as a
                // thread of the executor would, and set it again when the call is done.
                if (!Thread.interrupted() && !(failure.getCause() instanceof InterruptedException)) {
                    throw failure;
                }
                lenderInterrupted = true;
            }
        }

        @Override
        public int millis() {
            long left = (deadlineNanos - System.nanoTime()) / 1_000_000;
            return (int) Math.max(1, Math.min(Integer.MAX_VALUE, left));
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
