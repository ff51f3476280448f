package dev.fenceguard.jdbc;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.jdbc.internal.BoundedJdbc;
import dev.fenceguard.jdbc.internal.MySqlLockRows;
import dev.fenceguard.jdbc.internal.TableSettings;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * A lock backend on a MariaDB table (10.5 or newer; tested on 10.11), one row per lock key, with the
 * same contract as {@link PostgresLockBackend}.
 *
 * Handed out by {@link FenceGuardJdbc#lockBackend()} on MariaDB, on a table created by
 * {@code FenceGuardMigrations.builder(dataSource).withSchema("app").migrate()}.
 *
 * <p><b>One statement per operation.</b> Acquire is
 * {@code INSERT .. ON DUPLICATE KEY UPDATE .. RETURNING}: MariaDB's {@code RETURNING} (10.5+) hands back
 * the row as the statement left it, so a grant, a refusal and the fence come back in one round trip.
 * {@code ON DUPLICATE KEY UPDATE} has no {@code WHERE}; whether the lock is free is decided once, in the
 * first assignment, into a session variable ({@code @fg_won}) that the later assignments read
 * (assignments run left to right; a column assigned earlier would change the answer). {@code RETURNING}
 * tells a grant by the row holding the caller's lock id, acquired during this statement (at or after its
 * start, {@code NOW(6)}). Extend uses the same form, since MariaDB has no {@code UPDATE .. RETURNING}:
 * extending a key that has no row leaves a free row with fence 0, as if it had been released before its
 * first lock. Release is an {@code UPDATE}, lookup a {@code SELECT}.
 *
 * <p><b>Time.</b> Expiry is judged, and a new expiry counted, by the server's clock in UTC (each statement
 * sets {@code time_zone} for itself) read when the row is written: {@code SYSDATE(6)}, which MariaDB
 * evaluates when the function runs, after any wait for the row lock, read once per statement into
 * {@code @fg_now}. ({@code NOW(6)} is the time the statement started: an acquire that waited 2 s behind
 * another transaction's row lock got a lease 2 s short of its TTL, or one already expired.) Two
 * assumptions, both the server's defaults: the server does not run with {@code --sysdate-is-now} (which
 * makes {@code SYSDATE()} the statement's start again: leases shrink by the wait, and the lock client
 * refuses a grant that arrives after its lease's local deadline), and its binary log, if any, is in
 * {@code ROW} or {@code MIXED} format: {@code SYSDATE()} is unsafe for statement-based replication, so
 * {@code MIXED} logs these statements as rows, while {@code STATEMENT} would let a replica judge expiry by
 * its own clock. One case still counts from before a wait: the first acquisition of a key that has no
 * row yet reads the clock when its row is built, before it waits for another transaction's lock on the
 * gap (a locking read of that missing key); its lease is then short by that wait.
 *
 * <p><b>Bounds.</b> Each statement is prefixed with
 * {@code SET STATEMENT max_statement_time=<s>, innodb_lock_wait_timeout=<s>, time_zone='+00:00' FOR},
 * set to the time the call has left (same round trip, reverting after the statement), so a row lock
 * held by another connection cannot hold the call past its timeout (MariaDB ends the statement with
 * error 1969 or 1205, reported as {@link ErrorCode#TIMEOUT}); the stage completes with what the server
 * answered, and a connection still busy half a second after the timeout is aborted, as for
 * {@link PostgresLockBackend}, which also says who times out the caller and releases late grants. {@code SET STATEMENT} is MariaDB's: this backend does not run on
 * MySQL (MySQL has neither it nor {@code INSERT .. RETURNING}).
 *
 * <p>Keys are stored as their UTF-8 bytes in a {@code VARBINARY(512)} column: MySQL's text collations
 * fold case and ignore trailing spaces, which would make distinct keys one lock. Connections come from
 * the {@link DataSource} for one call each (MariaDB Connector/J or MySQL Connector/J); if the pool hands
 * them out with auto-commit off, the backend commits. Instances are immutable and thread-safe.
 *
 * @since 0.1
 */
final class MariaDbLockBackend extends MySqlTableLockBackend {

    private final String acquireSql;
    private final String releaseSql;
    private final String extendSql;
    private final String lookupSql;

    MariaDbLockBackend(TableSettings b) {
        super(b, "mariadb", MariaDbLockBackend::bounded);
        // Time is read when the row is written, after any wait for its row lock: SYSDATE(6), not NOW(6) (the
        // statement's start). One reading per statement, kept in @fg_now for the later assignments, so that every
        // judgment and the new expiry of a statement use the same instant.
        String expiry = "@fg_now + INTERVAL ? MICROSECOND";
        // FenceStrategy.CLOCK_FLOORED's floor in 10 µs ticks; UNIX_TIMESTAMP(NOW(6)) is an exact decimal. The floor
        // may lag the write by the wait: it only has to grow with time, the counter keeps fences rising.
        String floor = "FLOOR((UNIX_TIMESTAMP(NOW(6)) * 1000000 - " + ClockFloor.EPOCH_MILLIS * 1000 + ") / "
                + ClockFloor.MICROS_PER_FENCE + ")";
        // DENSE: a key without a row starts above the table's floor, the highest fence a purge removed
        // (docs/fence-lifecycle.md, "DENSE fences"), read with a locking read: it waits for a purge holding the floor
        // row FOR UPDATE and reads its committed value. (Read on every acquisition: nothing in this statement can
        // tell first whether the key has a row.) No floor row (a table migrated by hand): no purge ran, start at 1.
        String floorRow = "(SELECT fence_floor FROM `" + b.schema() + "`.`" + LockRowPurge.FLOOR_TABLE + "` WHERE lock_table = '"
                + b.table() + "' LOCK IN SHARE MODE)";
        String firstFence = strategy == FenceStrategy.DENSE ? "COALESCE(" + floorRow + " + 1, 1)" : "GREATEST(1, " + floor + ")";
        // The free row an extend of a key without a row leaves: under DENSE its fence is the floor, so that the
        // next acquisition (fence + 1) is above every fence a purge removed.
        String noFence = strategy == FenceStrategy.DENSE ? "COALESCE(" + floorRow + ", 0)" : "0";
        String nextFence = strategy == FenceStrategy.DENSE ? "fence + 1" : "GREATEST(fence + 1, " + floor + ")";
        String free = "(lock_id IS NULL OR expires_at <= @fg_now)";
        // RETURNING reads the row as the statement left it. It was granted if it holds our lock id and was acquired
        // during this statement (acquired_at >= NOW(6), the statement's start): a live lease of ours with the same
        // lock id was acquired by an earlier statement. RETURNING does not read @fg_now or @fg_won: on a connection
        // where a variable was never set, RETURNING reads it as NULL; for the exhaustion report it reads the clock.
        // The insert branch (a key without a row) reads the clock when its values are built, before a wait for
        // another transaction's gap lock: only such a first acquisition can count its TTL from before a wait.
        this.acquireSql = "INSERT INTO " + table + " (lock_key, fence, lock_id, acquired_at, expires_at) "
                + "VALUES (?, " + firstFence + ", ?, @fg_now := SYSDATE(6), " + expiry + ") "
                + "ON DUPLICATE KEY UPDATE lock_id = IF(@fg_won := ((@fg_now := SYSDATE(6)) IS NOT NULL AND " + free + " AND "
                + nextFence + " <= " + FenceToken.MAX_VALUE + "), VALUES(lock_id), lock_id), fence = IF(@fg_won, " + nextFence
                + ", fence), expires_at = IF(@fg_won, " + expiry + ", expires_at), acquired_at = IF(@fg_won, @fg_now, acquired_at) "
                + "RETURNING lock_id = ? AND acquired_at >= NOW(6), fence, expires_at, (lock_id IS NULL OR expires_at <= SYSDATE(6)) AND "
                + nextFence + " > " + FenceToken.MAX_VALUE + ", " + nextFence;
        this.releaseSql = "UPDATE " + table + " SET lock_id = NULL, expires_at = NULL "
                + "WHERE lock_key = ? AND lock_id = ? AND expires_at > SYSDATE(6)";
        this.extendSql = "INSERT INTO " + table + " (lock_key, fence, lock_id, expires_at, acquired_at) "
                + "VALUES (?, " + noFence + ", NULL, NULL, NULL) "
                + "ON DUPLICATE KEY UPDATE expires_at = IF((@fg_now := SYSDATE(6)) IS NOT NULL AND lock_id = ? AND expires_at > @fg_now, "
                + expiry + ", expires_at) "
                // Extended iff the row now holds our lock id and a future expiry, read after the judgment: a refused row
                // is unchanged, and was refused for lacking exactly that.
                + "RETURNING lock_id = ? AND expires_at > SYSDATE(6), expires_at";
        this.lookupSql = "SELECT fence, expires_at FROM " + table + " WHERE lock_key = ? AND lock_id IS NOT NULL AND expires_at > SYSDATE(6)";
    }

    @Override
    Optional<Grant> acquire(Connection c, BoundedJdbc.TimeLeft left, byte[] key, String keyName, LockId lockId, Duration ttl)
            throws SQLException {
        try (PreparedStatement ps = bounded(c, acquireSql, left)) {
            ps.setBytes(1, key);
            ps.setString(2, lockId.value());
            ps.setLong(3, MySqlLockRows.micros(ttl));
            ps.setLong(4, MySqlLockRows.micros(ttl));
            ps.setString(5, lockId.value());
            try (ResultSet rs = returned(ps)) {
                if (!rs.next()) {
                    throw new SQLException("the acquire statement returned no row", "HY000");
                }
                if (rs.getLong(1) == 1) {
                    return Optional.of(new Grant(rs.getLong(2), MySqlLockRows.instant(rs, 3)));
                }
                if (rs.getBoolean(4)) {
                    throw new FenceGuardException(ErrorCode.FENCE_EXHAUSTED, keyName, "the key has issued its last fence "
                            + "(next would be " + rs.getLong(5) + " > " + FenceToken.MAX_VALUE + "); no lock was taken");
                }
                return Optional.empty();
            }
        }
    }

    @Override
    boolean release(Connection c, BoundedJdbc.TimeLeft left, byte[] key, LockId lockId) throws SQLException {
        try (PreparedStatement ps = bounded(c, releaseSql, left)) {
            ps.setBytes(1, key);
            ps.setString(2, lockId.value());
            return ps.executeUpdate() == 1; // lock_id goes from a value to NULL: changed and found rows agree
        }
    }

    @Override
    Optional<Instant> extend(Connection c, BoundedJdbc.TimeLeft left, byte[] key, LockId lockId, Duration ttl) throws SQLException {
        try (PreparedStatement ps = bounded(c, extendSql, left)) {
            ps.setBytes(1, key);
            ps.setString(2, lockId.value());
            ps.setLong(3, MySqlLockRows.micros(ttl));
            ps.setString(4, lockId.value());
            try (ResultSet rs = returned(ps)) {
                return rs.next() && rs.getLong(1) == 1 ? Optional.of(MySqlLockRows.instant(rs, 2)) : Optional.empty();
            }
        }
    }

    @Override
    Optional<Live> lookup(Connection c, BoundedJdbc.TimeLeft left, byte[] key) throws SQLException {
        try (PreparedStatement ps = bounded(c, lookupSql, left)) {
            ps.setBytes(1, key);
            try (ResultSet rs = returned(ps)) {
                return rs.next() ? Optional.of(new Live(rs.getLong(1), MySqlLockRows.instant(rs, 2))) : Optional.empty();
            }
        }
    }

    /**
     * The rows of a statement behind {@code SET STATEMENT}: MySQL Connector/J refuses {@code executeQuery} for
     * what does not start with {@code SELECT}.
     */
    private static ResultSet returned(PreparedStatement ps) throws SQLException {
        if (!ps.execute()) {
            throw new SQLException("the statement returned no rows (is the server MariaDB 10.5 or newer?)", "HY000");
        }
        return ps.getResultSet();
    }

    /**
     * {@code sql} behind {@code SET STATEMENT} with the time the call has left. The numbers are formatted
     * here, not bound: {@code SET STATEMENT} takes constants.
     */
    private static PreparedStatement bounded(Connection c, String sql, BoundedJdbc.TimeLeft left) throws SQLException {
        int millis = left.millis();
        String prefix = String.format(Locale.ROOT, "SET STATEMENT max_statement_time=%d.%03d, innodb_lock_wait_timeout=%d, "
                + "time_zone='+00:00' FOR ", millis / 1000, millis % 1000, Math.max(1, (millis + 999) / 1000));
        return c.prepareStatement(prefix + sql);
    }
}
