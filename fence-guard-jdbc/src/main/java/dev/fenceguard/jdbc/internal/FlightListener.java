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
                return CompletableFuture.failedFuture(new FenceGuardException(ErrorCode.UNAVAILABLE, null,
                        "the flight store is closed; waiters poll"));
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
            closeQuietly(c);
        }
    }

    /** Closes the connection; later watches fail (their flights poll). */
    public void close() {
        CompletableFuture<Connection> current;
        synchronized (guard) {
            closed = true;
            current = listening;
            listening = null;
        }
        if (current != null) {
            current.thenAccept(FlightListener::abortQuietly); // ends the reader's wait at once
        }
    }

    /** Closes the socket under the reader's feet: {@code close()} would wait for the reader's lock. */
    private static void abortQuietly(Connection c) {
        try {
            c.abort(Runnable::run);
        } catch (SQLException | RuntimeException e) {
            closeQuietly(c);
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
