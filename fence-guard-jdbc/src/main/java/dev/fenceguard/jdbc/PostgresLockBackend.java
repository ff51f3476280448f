package dev.fenceguard.jdbc;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.internal.SqlIdentifiers;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.OwnConnection;
import dev.fenceguard.jdbc.internal.PgErrors;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * A lock backend on a PostgreSQL table (13 or newer), one row per lock key.
 *
 * <pre>{@code
 * FenceGuardMigrations.migrate(dataSource);                      // creates public.fence_guard_locks
 * LockClient locks = LockClient.of(PostgresLockBackend.builder(dataSource).build());
 * }</pre>
 *
 * <p>Every operation is one SQL statement, atomic on the server and judged by the server's
 * {@code clock_timestamp()} (not {@code now()}, which is the start of the transaction and already
 * stale after waiting on a row lock). Acquisition is one
 * {@code INSERT .. ON CONFLICT DO UPDATE .. WHERE <free or expired> RETURNING fence}: the fence counter
 * lives in the lock's row, is raised only on success, and is never deleted. Only a refused acquisition
 * may take a second statement, to tell "held" from "fences exhausted".
 *
 * <p>Connections come from the {@link DataSource} for one statement each; if the pool hands them out
 * with auto-commit off, the backend commits. Instances are immutable and thread-safe.
 */
public final class PostgresLockBackend implements LockBackend {

    private final DataSource dataSource;
    private final String table;
    private final FenceStrategy strategy;
    private final String acquireSql;
    private final String diagnoseSql;
    private final String releaseSql;
    private final String extendSql;
    private final String lookupSql;

    private PostgresLockBackend(Builder b) {
        this.dataSource = b.dataSource;
        this.strategy = b.strategy;
        this.table = '"' + b.schema + "\".\"" + b.table + '"'; // validated identifiers
        String expiry = "clock_timestamp() + (?::bigint * interval '1 millisecond')";
        // FenceStrategy.CLOCK_FLOORED's floor in 10 µs ticks (extract: exact numeric on 14+, a double good to ~1 µs on 13).
        String floor = "floor((extract(epoch from clock_timestamp()) * 1000000 - " + FenceStrategy.EPOCH_MILLIS * 1000
                + ") / " + FenceStrategy.MICROS_PER_FENCE + ")::bigint";
        String firstFence = strategy == FenceStrategy.DENSE ? "1" : "GREATEST(1, " + floor + ")";
        String nextFence = strategy == FenceStrategy.DENSE ? "l.fence + 1" : "GREATEST(l.fence + 1, " + floor + ")";
        this.acquireSql = "INSERT INTO " + table + " AS l (lock_key, fence, lock_id, expires_at, acquired_at) "
                + "VALUES (?, " + firstFence + ", ?, " + expiry + ", clock_timestamp()) "
                + "ON CONFLICT (lock_key) DO UPDATE SET fence = " + nextFence + ", lock_id = EXCLUDED.lock_id, "
                + "expires_at = " + expiry + ", acquired_at = clock_timestamp() "
                + "WHERE (l.lock_id IS NULL OR l.expires_at <= clock_timestamp()) AND " + nextFence + " <= " + FenceToken.MAX_VALUE
                + " RETURNING fence, expires_at";
        this.diagnoseSql = "SELECT " + nextFence + " FROM " + table
                + " l WHERE lock_key = ? AND (lock_id IS NULL OR expires_at <= clock_timestamp())";
        this.releaseSql = "UPDATE " + table + " SET lock_id = NULL, expires_at = NULL "
                + "WHERE lock_key = ? AND lock_id = ? AND expires_at > clock_timestamp()";
        this.extendSql = "UPDATE " + table + " SET expires_at = " + expiry
                + " WHERE lock_key = ? AND lock_id = ? AND expires_at > clock_timestamp() RETURNING expires_at";
        this.lookupSql = "SELECT fence, expires_at FROM " + table
                + " WHERE lock_key = ? AND lock_id IS NOT NULL AND expires_at > clock_timestamp()";
    }

    /**
     * A builder for a backend on {@code dataSource}; defaults: table {@code public.fence_guard_locks},
     * {@link FenceStrategy#DENSE}.
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    @Override
    public String name() {
        return "postgres";
    }

    /** The fence strategy in use. */
    public FenceStrategy fenceStrategy() {
        return strategy;
    }

    @Override
    public Optional<Grant> tryAcquire(LockKey key, LockId lockId, Duration ttl) {
        return run(key, "acquire", c -> {
            try (PreparedStatement ps = c.prepareStatement(acquireSql)) {
                ps.setString(1, key.value());
                ps.setString(2, lockId.value());
                ps.setLong(3, ttl.toMillis());
                ps.setLong(4, ttl.toMillis());
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return Optional.of(new Grant(rs.getLong(1), instant(rs, 2)));
                    }
                }
            }
            // Refused: held by a live lease, or free but out of fences. Only this path pays a second statement.
            try (PreparedStatement ps = c.prepareStatement(diagnoseSql)) {
                ps.setString(1, key.value());
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next() && rs.getLong(1) > FenceToken.MAX_VALUE) {
                        throw new FenceGuardException(ErrorCode.FENCE_EXHAUSTED, key.value(), "the key has issued its last fence "
                                + "(next would be " + rs.getLong(1) + " > " + FenceToken.MAX_VALUE + "); no lock was taken");
                    }
                }
            }
            return Optional.empty();
        });
    }

    @Override
    public boolean release(LockKey key, LockId lockId) {
        return run(key, "release", c -> {
            try (PreparedStatement ps = c.prepareStatement(releaseSql)) {
                ps.setString(1, key.value());
                ps.setString(2, lockId.value());
                return ps.executeUpdate() == 1;
            }
        });
    }

    @Override
    public Optional<Instant> extend(LockKey key, LockId lockId, Duration ttl) {
        return run(key, "extend", c -> {
            try (PreparedStatement ps = c.prepareStatement(extendSql)) {
                ps.setLong(1, ttl.toMillis());
                ps.setString(2, key.value());
                ps.setString(3, lockId.value());
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(instant(rs, 1)) : Optional.empty();
                }
            }
        });
    }

    @Override
    public Optional<LockInfo> lookup(LockKey key) {
        return run(key, "lookup", c -> {
            try (PreparedStatement ps = c.prepareStatement(lookupSql)) {
                ps.setString(1, key.value());
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(new LockInfo(key, FenceToken.of(rs.getLong(1)), instant(rs, 2))) : Optional.empty();
                }
            }
        });
    }

    @Override
    public String toString() {
        return "PostgresLockBackend[" + table + ", " + strategy + "]";
    }

    private static Instant instant(ResultSet rs, int column) throws SQLException {
        return rs.getObject(column, OffsetDateTime.class).toInstant();
    }

    private <T> T run(LockKey key, String operation, OwnConnection.Work<T> work) {
        try {
            return OwnConnection.run(dataSource, work);
        } catch (SQLException e) {
            throw PgErrors.map(e, key.value(), operation + " on " + table);
        }
    }

    /** Options for a {@link PostgresLockBackend}. Not thread-safe; {@link #build()} copies. */
    public static final class Builder {
        private final DataSource dataSource;
        private String schema = "public";
        private String table = "fence_guard_locks";
        private FenceStrategy strategy = FenceStrategy.DENSE;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /**
         * The schema of the lock table; default {@code public}.
         *
         * @throws IllegalArgumentException if not a plain SQL identifier
         */
        public Builder withSchema(String schema) {
            this.schema = SqlIdentifiers.require("schema", schema);
            return this;
        }

        /**
         * The lock table; default {@code fence_guard_locks}.
         *
         * @throws IllegalArgumentException if not a plain SQL identifier
         */
        public Builder withTable(String table) {
            this.table = SqlIdentifiers.require("table", table);
            return this;
        }

        /**
         * How fences are chosen; default {@link FenceStrategy#DENSE}. Choose
         * {@link FenceStrategy#CLOCK_FLOORED} when the database can fail over to an asynchronous replica
         * that may not have the latest fences.
         */
        public Builder withFenceStrategy(FenceStrategy strategy) {
            this.strategy = Objects.requireNonNull(strategy, "strategy");
            return this;
        }

        /** A backend with these settings. */
        public PostgresLockBackend build() {
            Builder copy = new Builder(dataSource);
            copy.schema = schema;
            copy.table = table;
            copy.strategy = strategy;
            return new PostgresLockBackend(copy);
        }
    }
}
