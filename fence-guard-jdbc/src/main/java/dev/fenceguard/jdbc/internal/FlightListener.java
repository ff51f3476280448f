package dev.fenceguard.jdbc.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.FlightWatchers;
import dev.fenceguard.core.spi.FlightStore.FlightWatch;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code LISTEN} connection of a PostgreSQL flight store, read by one virtual thread, and the
 * watchers it dispatches notifications to by payload (the flight key). Opened on the first watch; if
 * it breaks, every watcher is called once (so it looks again, then polls) and the next watch reopens it.
 * The connection is aborted when the reader lets it go, so a pool drops it rather than lend it again.
 */
public final class FlightListener {

    private static final Logger log = LoggerFactory.getLogger(FlightListener.class);
    /** How long one wait for notifications blocks; a closed connection ends it at once anyway. */
    private static final int WAIT_MILLIS = 10_000;

    private final DataSource dataSource;
    private final String channel;
    private final FlightWatchers watchers = new FlightWatchers();
    private final Object guard = new Object();
    private CompletableFuture<Connection> listening;
    /**
     * The connection the reader holds, from when it has it until it starts to give it back; guarded by
     * {@code guard}. {@link #close()} aborts only this one, under the guard: a connection already on its way
     * back to a pool is never aborted there (where the next borrower would get it closed).
     */
    private Connection held;
    private boolean closed;

    public FlightListener(DataSource dataSource, String channel) {
        this.dataSource = dataSource;
        this.channel = channel;
    }

    /** Registers {@code onChange} for {@code key}; the stage completes once the connection listens. */
    public CompletionStage<FlightWatch> watch(String key, Runnable onChange) {
        FlightWatch watch = watchers.add(key, onChange);
        return connection().handle((c, error) -> {
            if (error != null) {
                watch.close();
                throw error instanceof FenceGuardException f ? f
                        : new FenceGuardException(ErrorCode.UNAVAILABLE, key, "cannot LISTEN on " + channel, error);
            }
            return watch;
        });
    }

    private CompletableFuture<Connection> connection() {
        CompletableFuture<Connection> start;
        synchronized (guard) {
            if (closed) {
                return CompletableFuture.failedFuture(FlightWatchers.storeClosed());
            }
            if (listening != null && !listening.isCompletedExceptionally()) {
                return listening;
            }
            start = new CompletableFuture<>();
            listening = start;
        }
        Thread.ofVirtual().name("fence-guard-listen-" + channel).start(() -> listen(start));
        return start;
    }

    private void listen(CompletableFuture<Connection> start) {
        Connection c = null;
        try {
            c = dataSource.getConnection();
            synchronized (guard) {
                if (closed) {
                    start.completeExceptionally(FlightWatchers.storeClosed());
                    return;
                }
                held = c;
            }
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) {
                s.execute("LISTEN \"" + channel + "\""); // a channel of fg_sf_ and hex digits: nothing to escape
            }
            PGConnection pg = c.unwrap(PGConnection.class);
            start.complete(c);
            log.debug("listening on {}", channel);
            while (true) {
                PGNotification[] batch = pg.getNotifications(WAIT_MILLIS);
                synchronized (guard) {
                    if (closed || listening != start) {
                        return;
                    }
                }
                if (batch != null) {
                    for (PGNotification n : batch) {
                        watchers.tell(n.getParameter());
                    }
                }
            }
        } catch (SQLException | RuntimeException e) {
            boolean wasClosed;
            synchronized (guard) {
                wasClosed = closed;
                if (listening == start) {
                    listening = null;
                }
            }
            if (!start.completeExceptionally(PgErrors.map(e, null, "LISTEN " + channel)) && !wasClosed) {
                log.warn("the LISTEN connection of {} broke; waiters poll until the next flight listens again: {}", channel,
                        PgErrors.map(e, null, "LISTEN").getMessage());
                watchers.tellAll();
            }
        } finally {
            synchronized (guard) {
                if (held == c) {
                    held = null;
                }
            }
            if (c != null) {
                // Never back to a pool as a connection to reuse: its session still LISTENs, or it broke in a read
                // the pool did not see (getNotifications runs on the driver's connection, past the pool's proxy),
                // and a pool that does not validate a connection used moments ago would hand it out broken. An
                // aborted connection is one every pool drops on its return.
                abortQuietly(c);
            }
            closeQuietly(c);
        }
    }

    /** Closes the connection; later watches fail (their flights poll). */
    public void close() {
        synchronized (guard) {
            closed = true;
            listening = null;
            if (held != null) {
                abortQuietly(held); // ends the reader's wait at once; the reader gives it back only after taking the guard
                held = null;
            }
        }
    }

    /**
     * Closes the socket (under the reader's feet when {@link #close()} calls it: {@code close()} would wait for the
     * reader's lock); quick, and never falls back to a {@code close()} that could wait, as {@link #close()} runs it
     * with the guard held. If it fails there, the reader sees the store closed at its next wake, within
     * {@link #WAIT_MILLIS}.
     */
    private static void abortQuietly(Connection c) {
        try {
            c.abort(Runnable::run);
        } catch (SQLException | RuntimeException e) {
            log.debug("could not abort the LISTEN connection: {}", e.getClass().getName());
        }
    }

    private static void closeQuietly(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (SQLException e) {
                log.debug("closing the LISTEN connection failed: {}", e.getSQLState());
            }
        }
    }
}
