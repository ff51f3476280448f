package dev.fenceguard.jdbc;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.jdbc.internal.BoundStatements;
import dev.fenceguard.jdbc.internal.BoundedJdbc;
import dev.fenceguard.jdbc.internal.FlightListener;
import dev.fenceguard.jdbc.internal.TableSettings;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import javax.sql.DataSource;

/**
 * The {@link FlightStore} of {@link dev.fenceguard.core.singleflight.Singleflight} on a PostgreSQL
 * table (13 or newer), one row per flight key, created by {@code FenceGuardMigrations.singleflightBuilder} in
 * fence-guard-migrations.
 *
 * Handed out by {@link FenceGuardJdbc#flightStore()} on PostgreSQL; {@link FenceGuardJdbc#close()} closes it.
 *
 * <p><b>Statements.</b> Begin and publish are each one {@code INSERT .. ON CONFLICT DO UPDATE .. WHERE}
 * judged by {@code clock_timestamp()}: begin records the flight's fence unless a result is retained or a
 * greater fence began; publish stores the result only if no greater fence began, and calls
 * {@code pg_notify} in its {@code RETURNING}, so the notification is sent exactly when the publish
 * applies, on commit. Only a refused begin or publish takes a second statement, to say why.
 *
 * <p><b>Notification.</b> Waiters are woken by {@code LISTEN}/{@code NOTIFY} on one channel per table
 * ({@code fg_sf_} and 16 hex digits of a hash of the table's name; the payload is the flight key). Each
 * store instance holds one dedicated connection from {@link FenceGuardJdbc.Builder#withListenerDataSource the listener
 * data source} (by default the store's own, so a pool lends it one connection for good), opened on the
 * first wait and read by one virtual thread. If that connection breaks, waiters are told once (they
 * look again) and fall back to their poll interval; the next wait reconnects. {@link #close()} closes it.
 *
 * <p>Calls are bounded like {@link PostgresLockBackend}'s: on the server ({@code lock_timeout},
 * {@code statement_timeout}) and here. Thread-safe.
 *
 * @since 0.1
 */
final class PostgresFlightStore implements FlightStore, AutoCloseable {


    private final BoundedJdbc calls;
    private final String table;
    private final String channel;
    private final FlightListener listener;
    private final String readSql;
    private final String beginSql;
    private final String diagnoseSql;
    private final String publishSql;
    private final String newestSql;
    private final String wakeSql;

    PostgresFlightStore(TableSettings b, DataSource listenerDataSource) {
        this.calls = new BoundedJdbc(b.dataSource(), b.executor());
        this.table = b.doubleQuoted();
        this.channel = channelOf(b.schema(), b.table());
        this.listener = new FlightListener(listenerDataSource, channel);
        String retained = "f.result IS NOT NULL AND f.result_expires_at > clock_timestamp()";
        this.readSql = BoundStatements.BOUND + "SELECT f.result_fence, f.result FROM " + table + " f WHERE f.flight_key = ? AND " + retained;
        this.beginSql = BoundStatements.BOUND + "INSERT INTO " + table + " AS f (flight_key, flight_fence, updated_at) VALUES (?, ?, clock_timestamp()) "
                + "ON CONFLICT (flight_key) DO UPDATE SET flight_fence = EXCLUDED.flight_fence, result = NULL, result_fence = NULL, "
                + "result_expires_at = NULL, updated_at = EXCLUDED.updated_at "
                + "WHERE f.flight_fence <= EXCLUDED.flight_fence AND NOT (" + retained + ") RETURNING 1";
        this.diagnoseSql = BoundStatements.BOUND + "SELECT f.flight_fence, (" + retained + "), f.result_fence, f.result FROM " + table
                + " f WHERE f.flight_key = ?";
        this.publishSql = BoundStatements.BOUND + "INSERT INTO " + table + " AS f (flight_key, flight_fence, result, result_fence, result_expires_at, "
                + "updated_at) VALUES (?, ?, ?, ?, clock_timestamp() + (?::bigint * interval '1 millisecond'), clock_timestamp()) "
                + "ON CONFLICT (flight_key) DO UPDATE SET flight_fence = EXCLUDED.flight_fence, result = EXCLUDED.result, "
                + "result_fence = EXCLUDED.result_fence, result_expires_at = EXCLUDED.result_expires_at, updated_at = EXCLUDED.updated_at "
                + "WHERE f.flight_fence <= EXCLUDED.flight_fence RETURNING 1, pg_notify(?, f.flight_key)";
        this.newestSql = BoundStatements.BOUND + "SELECT f.flight_fence FROM " + table + " f WHERE f.flight_key = ?";
        this.wakeSql = BoundStatements.BOUND + "SELECT pg_notify(?, ?)";
    }

    @Override
    public String name() {
        return "postgres";
    }

    /** The NOTIFY channel of this table, shared by every store instance on it. */
    public String channel() {
        return channel;
    }

    @Override
    public CompletionStage<Optional<FlightResult>> read(LockKey key, Duration timeout) {
        return calls.submit(key.value(), "singleflight read on " + table, timeout, (c, left) -> {
            try (PreparedStatement ps = BoundStatements.prepare(c, readSql, left)) {
                ps.setString(3, key.value());
                try (ResultSet rs = BoundStatements.resultAfterBound(ps)) {
                    return rs.next() ? Optional.of(new FlightResult(rs.getLong(1), rs.getBytes(2))) : Optional.<FlightResult>empty();
                }
            }
        });
    }

    @Override
    public CompletionStage<FlightStart> begin(LockKey key, long fence, Duration timeout) {
        return calls.submit(key.value(), "singleflight begin on " + table, timeout, (c, left) -> {
            // A result that expires between the refused begin and its diagnosis leaves neither reason: begin again.
            for (int attempt = 0; ; attempt++) {
                try (PreparedStatement ps = BoundStatements.prepare(c, beginSql, left)) {
                    ps.setString(3, key.value());
                    ps.setLong(4, fence);
                    try (ResultSet rs = BoundStatements.resultAfterBound(ps)) {
                        if (rs.next()) {
                            return new FlightStart.Started();
                        }
                    }
                }
                try (PreparedStatement ps = BoundStatements.prepare(c, diagnoseSql, left)) {
                    ps.setString(3, key.value());
                    try (ResultSet rs = BoundStatements.resultAfterBound(ps)) {
                        if (rs.next()) {
                            if (rs.getBoolean(2)) {
                                return new FlightStart.Retained(new FlightResult(rs.getLong(3), rs.getBytes(4)));
                            }
                            if (rs.getLong(1) > fence || attempt >= 2) {
                                return new FlightStart.Superseded(rs.getLong(1));
                            }
                        }
                    }
                }
            }
        });
    }

    @Override
    public CompletionStage<WriteOutcome> publish(LockKey key, long fence, byte[] result, Duration retention, Duration timeout) {
        String resource = table + "[flight_key=" + key.value() + "]";
        return calls.submit(key.value(), "singleflight publish on " + table, timeout, (c, left) -> {
            try (PreparedStatement ps = BoundStatements.prepare(c, publishSql, left)) {
                ps.setString(3, key.value());
                ps.setLong(4, fence);
                ps.setBytes(5, result);
                ps.setLong(6, fence);
                ps.setLong(7, retention.toMillis());
                ps.setString(8, channel);
                try (ResultSet rs = BoundStatements.resultAfterBound(ps)) {
                    if (rs.next()) {
                        return new WriteOutcome.Applied(resource, fence);
                    }
                }
            }
            try (PreparedStatement ps = BoundStatements.prepare(c, newestSql, left)) {
                ps.setString(3, key.value());
                try (ResultSet rs = BoundStatements.resultAfterBound(ps)) {
                    long newest = rs.next() ? rs.getLong(1) : 0;
                    return new WriteOutcome.Stale(resource, fence, newest, FencePolicy.SAME_OR_NEWER);
                }
            }
        });
    }

    @Override
    public CompletionStage<Void> wake(LockKey key, Duration timeout) {
        return calls.submit(key.value(), "singleflight wake on " + table, timeout, (c, left) -> {
            try (PreparedStatement ps = BoundStatements.prepare(c, wakeSql, left)) {
                ps.setString(3, channel);
                ps.setString(4, key.value());
                BoundStatements.resultAfterBound(ps).close();
                return (Void) null;
            }
        });
    }

    @Override
    public CompletionStage<FlightWatch> watch(LockKey key, Runnable onChange) {
        return listener.watch(key.value(), Objects.requireNonNull(onChange, "onChange"));
    }

    /** Closes the listener connection; waiters then poll. The store's other calls go on working. */
    @Override
    public void close() {
        listener.close();
    }

    @Override
    public String toString() {
        return "PostgresFlightStore[" + table + ", channel " + channel + "]";
    }

    /** {@code fg_sf_} and 16 hex digits of SHA-256 of {@code schema.table}: a valid channel name whatever the table's length. */
    static String channelOf(String schema, String table) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest((schema + "." + table).getBytes(StandardCharsets.UTF_8));
            return "fg_sf_" + HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }
}
