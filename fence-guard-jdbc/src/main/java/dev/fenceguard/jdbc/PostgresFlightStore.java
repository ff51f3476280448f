package dev.fenceguard.jdbc;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.SqlIdentifiers;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.jdbc.internal.BoundedJdbc;
import dev.fenceguard.jdbc.internal.BoundStatements;
import dev.fenceguard.jdbc.internal.FlightListener;
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
 * <pre>{@code
 * FenceGuardMigrations.singleflightBuilder(dataSource).migrate();  // public.fence_guard_flights
 * try (PostgresFlightStore store = PostgresFlightStore.builder(dataSource).build()) {
 *     Singleflight flights = Singleflight.builder(lockClient, store).build();
 *     ...
 * }
 * }</pre>
 *
 * <p><b>Statements.</b> Begin and publish are each one {@code INSERT .. ON CONFLICT DO UPDATE .. WHERE}
 * judged by {@code clock_timestamp()}: begin records the flight's fence unless a result is retained or a
 * greater fence began; publish stores the result only if no greater fence began, and calls
 * {@code pg_notify} in its {@code RETURNING}, so the notification is sent exactly when the publish
 * applies, on commit. Only a refused begin or publish takes a second statement, to say why.
 *
 * <p><b>Notification.</b> Waiters are woken by {@code LISTEN}/{@code NOTIFY} on one channel per table
 * ({@code fg_sf_} and 16 hex digits of a hash of the table's name; the payload is the flight key). Each
 * store instance holds one dedicated connection from {@link Builder#withListenerDataSource the listener
 * data source} (by default the store's own, so a pool lends it one connection for good), opened on the
 * first wait and read by one virtual thread. If that connection breaks, waiters are told once (they
 * look again) and fall back to their poll interval; the next wait reconnects. {@link #close()} closes it.
 *
 * <p>Calls are bounded like {@link PostgresLockBackend}'s: on the server ({@code lock_timeout},
 * {@code statement_timeout}) and here. Thread-safe.
 *
 * @since 0.1
 */
public final class PostgresFlightStore implements FlightStore, AutoCloseable {


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

    private PostgresFlightStore(Builder b) {
        this.calls = new BoundedJdbc(b.dataSource, b.executor);
        this.table = '"' + b.schema + "\".\"" + b.table + '"';
        this.channel = channelOf(b.schema, b.table);
        this.listener = new FlightListener(b.listenerDataSource, channel);
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

    /**
     * A builder for a store on {@code dataSource}; defaults: table {@code public.fence_guard_flights},
     * a virtual thread per call, the listener connection from {@code dataSource}.
     *
     * @throws NullPointerException if {@code dataSource} is null
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
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

    /** Options for a {@link PostgresFlightStore}. Not thread-safe; {@link #build()} copies. */
    public static final class Builder {
        private final DataSource dataSource;
        private DataSource listenerDataSource;
        private String schema = "public";
        private String table = "fence_guard_flights";
        private Executor executor = BoundedJdbc.VIRTUAL_THREADS;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
            this.listenerDataSource = dataSource;
        }

        /**
         * The schema of the table; default {@code public}.
         *
         * @throws IllegalArgumentException if not a plain SQL identifier
         */
        public Builder withSchema(String schema) {
            this.schema = SqlIdentifiers.require("schema", schema);
            return this;
        }

        /**
         * The table; default {@code fence_guard_flights}.
         *
         * @throws IllegalArgumentException if not a plain SQL identifier
         */
        public Builder withTable(String table) {
            this.table = SqlIdentifiers.require("table", table);
            return this;
        }

        /**
         * Where the one long-lived {@code LISTEN} connection comes from; default the store's data
         * source. Give a non-pooled one (a {@code PGSimpleDataSource}) to keep the pool's connections for
         * statements. It must reach the same database, and not through a pooler in transaction mode
         * (PgBouncer drops {@code LISTEN} there).
         *
         * @throws NullPointerException if {@code dataSource} is null
         */
        public Builder withListenerDataSource(DataSource dataSource) {
            this.listenerDataSource = Objects.requireNonNull(dataSource, "dataSource");
            return this;
        }

        /**
         * Where the blocking JDBC work of each call runs; default a new virtual thread per call (see
         * {@link PostgresLockBackend.Builder#withExecutor}).
         *
         * @throws NullPointerException if {@code executor} is null
         */
        public Builder withExecutor(Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /** A store with these settings; connects nothing until the first call. */
        public PostgresFlightStore build() {
            Builder copy = new Builder(dataSource);
            copy.listenerDataSource = listenerDataSource;
            copy.schema = schema;
            copy.table = table;
            copy.executor = executor;
            return new PostgresFlightStore(copy);
        }
    }
}
