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
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * A lock backend on a MySQL table (8.0.19 or newer), one row per lock key, with the same contract and
 * the same table as {@link MariaDbLockBackend}. It uses only syntax that MySQL 8.0.19+ and MariaDB 10.11
 * both accept; fence-guard's tests run it on MariaDB 10.11 through MySQL Connector/J and MariaDB
 * Connector/J (no MySQL server ran it). On MariaDB prefer {@link MariaDbLockBackend}: one round trip for
 * every grant, and server-side statement bounds.
 *
 * Handed out by {@link FenceGuardJdbc#lockBackend()} on MySQL, on a table created by
 * {@code FenceGuardMigrations.builder(dataSource).withSchema("app").migrate()}.
 *
 * <p><b>Acquire.</b> One {@code INSERT .. ON DUPLICATE KEY UPDATE}, whose assignments run left to right,
 * each seeing the columns set before it. The first ({@code acquired_at}) decides whether the lock is free
 * (no holder or expired, and a fence left) and, if so, stores the time of the grant; the later ones
 * re-derive that decision from the row as the earlier assignments left it (a grant's {@code acquired_at}
 * is at or after the expiry it found passed; a held row was acquired before it expires), so it is taken
 * once and never recomputed from the clock or from changed columns (see {@code docs/mysql-mariadb.md}).
 * The new expiry is {@code acquired_at} plus the TTL. The statement hands its answer back through
 * {@code LAST_INSERT_ID(expr)}, which the server reports as the statement's insert id in the same reply:
 * the granted fence, "held", or "fences exhausted" with the next fence. A refusal is one round trip; a
 * grant takes a second, a primary-key read of the expiry the grant stored ({@code RETURNING} is
 * MariaDB's, and the insert id has room for the fence only).
 *
 * <p><b>Release</b> and <b>extend</b> are one {@code UPDATE} each; extend reports the new expiry through
 * {@code LAST_INSERT_ID(expr)}. <b>Lookup</b> is a {@code SELECT}.
 *
 * <p><b>Time.</b> Expiry is judged, and a new expiry counted, by the server's clock in UTC when the row is
 * written, after any wait for its row lock: {@code UTC_TIMESTAMP(6)} (the statement's start, in UTC
 * whatever the session's time zone) plus the time since, {@code SYSDATE(6) - NOW(6)} (two readings in the
 * session's zone; {@code SYSDATE()} is read when it runs). An acquire that waited 2 s behind another
 * transaction's row lock so gets its whole TTL from its grant, not 2 s less. Assumptions: the server does
 * not run with {@code --sysdate-is-now} (which makes {@code SYSDATE()} the statement's start again: leases
 * shrink by the wait, and the lock client refuses a grant that arrives after its lease's local deadline);
 * the binary log, if any, is in {@code ROW} (MySQL's default) or {@code MIXED} format, since
 * {@code SYSDATE()} is unsafe for statement-based replication; and no daylight-saving change of the
 * session's time zone falls inside a statement (it would shift that statement's reading by the change:
 * give the pool a UTC session zone, {@code connectionTimeZone=UTC&forceConnectionTimeZoneToSession=true} in
 * MySQL Connector/J, to rule it out). The first acquisition of a key that has no row yet reads the clock
 * when its row is built, before any wait for another transaction's lock on the gap; its lease is then
 * short by that wait.
 *
 * <p><b>Bounds.</b> MySQL has no {@code SET STATEMENT}, its {@code MAX_EXECUTION_TIME} hint bounds only
 * {@code SELECT}s (the lookup carries it) and its {@code SET_VAR} hint does not take
 * {@code innodb_lock_wait_timeout}; setting that per call would cost a round trip. So the writes carry no
 * server-side bound of their own: a connection still busy half a second after the timeout is aborted, as
 * for {@link PostgresLockBackend}, and the lock client ends the caller's wait at the timeout
 * ({@link ErrorCode#TIMEOUT}) and releases a grant that arrives after it.
 * Rows are locked only for the length of one auto-commit statement, so a write waits long only behind a
 * transaction of someone else's holding the row; bound that with the connection's
 * {@code innodb_lock_wait_timeout} (MySQL Connector/J: {@code sessionVariables=innodb_lock_wait_timeout=5}).
 *
 * <p>Keys are stored as their UTF-8 bytes in a {@code VARBINARY(512)} column. Connections come from the
 * {@link DataSource} for one call each; if the pool hands them out with auto-commit off, the backend
 * commits. Instances are immutable and thread-safe.
 *
 * @since 0.1
 */
final class MySqlLockBackend extends MySqlTableLockBackend {

    /** The insert id of an acquire refused because a live lease holds the key; above any fence. */
    static final long HELD = 1L << 61;
    /** Added to the next fence in the insert id of an acquire refused because the key's fences are used up. */
    static final long EXHAUSTED = 1L << 62;
    /**
     * The server's time in UTC when the expression runs, after any wait for the row lock: the statement's start in
     * UTC plus the time since, read with SYSDATE(6) (MySQL has no UTC form of it; the difference of two readings in
     * the session's zone is the elapsed time). Each use reads the clock again.
     */
    static final String NOW = "(UTC_TIMESTAMP(6) + INTERVAL TIMESTAMPDIFF(MICROSECOND, NOW(6), SYSDATE(6)) MICROSECOND)";

    private final String acquireSql;
    private final String expirySql;
    private final String releaseSql;
    private final String extendSql;
    private final String lookupSql;
    private final String liveSql;

    MySqlLockBackend(TableSettings b) {
        // MySQL has no SET STATEMENT: the purge batch's statements are bounded by the abort, as the writes are.
        super(b, "mysql", (c, sql, left) -> c.prepareStatement(sql));
        String now = NOW;
        String expiry = now + " + INTERVAL ? MICROSECOND";
        // FenceStrategy.CLOCK_FLOORED's floor in 10 µs ticks, from an exact integer (no session time zone involved). It
        // uses the statement's start: one value for the whole statement, and the floor only has to grow with time.
        String nowMicros = "TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', UTC_TIMESTAMP(6))";
        String floor = "((" + nowMicros + " - " + ClockFloor.EPOCH_MILLIS * 1000 + ") DIV " + ClockFloor.MICROS_PER_FENCE + ")";
        // DENSE: a key without a row starts above the table's floor, the highest fence a purge removed
        // (docs/fence-lifecycle.md, "DENSE fences"), read with a locking read: it waits for a purge holding the floor
        // row FOR UPDATE and reads its committed value. (Read on every acquisition: nothing in this statement can
        // tell first whether the key has a row.) No floor row (a table migrated by hand): no purge ran, start at 1.
        String firstFence = strategy == FenceStrategy.DENSE ? "COALESCE((SELECT fence_floor + 1 FROM `" + b.schema() + "`.`"
                + LockRowPurge.FLOOR_TABLE + "` WHERE lock_table = '" + b.table() + "' LOCK IN SHARE MODE), 1)" : "GREATEST(1, " + floor + ")";
        String nextFence = strategy == FenceStrategy.DENSE ? "fence + 1" : "GREATEST(fence + 1, " + floor + ")";
        String fenceLeft = nextFence + " <= " + FenceToken.MAX_VALUE;
        String free = "(lock_id IS NULL OR expires_at <= " + now + ")";
        // The first assignment decides, reading the clock once more for the time it stores: a grant sets acquired_at
        // to a time at or after the expiry it found passed. The later assignments re-derive the decision from the row
        // alone, never from another reading of the clock: "free by acquired_at" holds after a grant, and never for a
        // row that stayed held (a held row was acquired before it expires).
        String freeByAcquired = "(lock_id IS NULL OR expires_at <= acquired_at)";
        String won = "(lock_id = ? AND (expires_at IS NULL OR expires_at <= acquired_at) AND " + fenceLeft + ")";
        // After fence was assigned: a refused expired lease of ours (fences used up) was acquired before it expired.
        String wonAfterFence = "(lock_id = ? AND (expires_at IS NULL OR expires_at <= acquired_at))";
        this.acquireSql = "INSERT INTO " + table + " (lock_key, fence, lock_id, acquired_at, expires_at) "
                + "VALUES (?, LAST_INSERT_ID(" + firstFence + "), ?, " + now + ", acquired_at + INTERVAL ? MICROSECOND) "
                + "ON DUPLICATE KEY UPDATE acquired_at = IF(" + free + " AND " + fenceLeft + ", " + now + ", acquired_at), "
                + "lock_id = IF(" + freeByAcquired + " AND " + fenceLeft + ", ?, lock_id), "
                // Refused: keep the fence while reporting why; the inner IF's condition is never true.
                + "fence = IF(" + won + ", LAST_INSERT_ID(" + nextFence + "), IF(LAST_INSERT_ID(IF(" + free + " AND NOT ("
                + fenceLeft + "), " + EXHAUSTED + " + " + nextFence + ", " + HELD + ")) = 0, NULL, fence)), "
                + "expires_at = IF(" + wonAfterFence + ", acquired_at + INTERVAL ? MICROSECOND, expires_at)";
        this.expirySql = "SELECT (SELECT expires_at FROM " + table + " WHERE lock_key = ? AND lock_id = ? AND fence = ?), " + now;
        this.releaseSql = "UPDATE " + table + " SET lock_id = NULL, expires_at = NULL "
                + "WHERE lock_key = ? AND lock_id = ? AND expires_at > " + now;
        // expires_at first: the report after it reads the new value. The IF's condition is never true.
        this.extendSql = "UPDATE " + table + " SET expires_at = " + expiry + ", acquired_at = IF(LAST_INSERT_ID("
                + "TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', expires_at)) = 0, NULL, acquired_at) "
                + "WHERE lock_key = ? AND lock_id = ? AND expires_at > " + now;
        this.liveSql = "SELECT expires_at FROM " + table + " WHERE lock_key = ? AND lock_id = ? AND expires_at > " + now;
        this.lookupSql = "SELECT /*+ MAX_EXECUTION_TIME(%d) */ fence, expires_at FROM " + table
                + " WHERE lock_key = ? AND lock_id IS NOT NULL AND expires_at > " + now;
    }

    /** Writes no server-side bound (see the class comment): {@code left} bounds only the lookup. */
    @Override
    Optional<Grant> acquire(Connection c, BoundedJdbc.TimeLeft left, byte[] key, String keyName, LockId lockId, Duration ttl) throws SQLException {
        long answer;
        try (PreparedStatement ps = c.prepareStatement(acquireSql, Statement.RETURN_GENERATED_KEYS)) {
            ps.setBytes(1, key);
            ps.setString(2, lockId.value());
            ps.setLong(3, MySqlLockRows.micros(ttl));
            for (int i = 4; i <= 6; i++) { // the grant, then its two re-derivations
                ps.setString(i, lockId.value());
            }
            ps.setLong(7, MySqlLockRows.micros(ttl));
            ps.executeUpdate();
            answer = insertId(c, ps);
        }
        if (answer == HELD) {
            return Optional.empty();
        }
        if (answer >= EXHAUSTED) {
            throw new FenceGuardException(ErrorCode.FENCE_EXHAUSTED, keyName, "the key has issued its last fence "
                    + "(next would be " + (answer - EXHAUSTED) + " > " + FenceToken.MAX_VALUE + "); no lock was taken");
        }
        if (answer < FenceToken.MIN_VALUE || answer > FenceToken.MAX_VALUE) {
            throw new SQLException("the acquire statement reported no answer (insert id " + answer + ")", "HY000");
        }
        return Optional.of(new Grant(answer, grantedExpiry(c, key, lockId, answer)));
    }

    /**
     * The expiry the grant stored. If the row no longer holds the grant (its TTL ran out and another caller took
     * the key in between), the lease is over: the server's time now is a bound on when it ended.
     */
    private Instant grantedExpiry(Connection c, byte[] key, LockId lockId, long fence) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(expirySql)) {
            ps.setBytes(1, key);
            ps.setString(2, lockId.value());
            ps.setLong(3, fence);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next(); // no FROM: always one row
                return rs.getObject(1) != null ? MySqlLockRows.instant(rs, 1) : MySqlLockRows.instant(rs, 2);
            }
        }
    }

    @Override
    boolean release(Connection c, BoundedJdbc.TimeLeft left, byte[] key, LockId lockId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(releaseSql)) {
            ps.setBytes(1, key);
            ps.setString(2, lockId.value());
            return ps.executeUpdate() == 1; // lock_id goes from a value to NULL: changed and found rows agree
        }
    }

    @Override
    Optional<Instant> extend(Connection c, BoundedJdbc.TimeLeft left, byte[] key, LockId lockId, Duration ttl) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(extendSql, Statement.RETURN_GENERATED_KEYS)) {
            ps.setLong(1, MySqlLockRows.micros(ttl));
            ps.setBytes(2, key);
            ps.setString(3, lockId.value());
            ps.executeUpdate();
            try (ResultSet keys = ps.getGeneratedKeys()) {
                if (keys.next()) {
                    return Optional.of(Instant.EPOCH.plusNanos(keys.getLong(1) * 1000));
                }
            }
        }
        // No row counted. With changed-row counts that is also an extend that left the expiry as it was
        // (the same statement time and TTL as the last write): the lease is extended iff it is live now.
        try (PreparedStatement ps = c.prepareStatement(liveSql)) {
            ps.setBytes(1, key);
            ps.setString(2, lockId.value());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(MySqlLockRows.instant(rs, 1)) : Optional.empty();
            }
        }
    }

    @Override
    Optional<Live> lookup(Connection c, BoundedJdbc.TimeLeft left, byte[] key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(lookupSql.formatted(left.millis()))) {
            ps.setBytes(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(new Live(rs.getLong(1), MySqlLockRows.instant(rs, 2))) : Optional.empty();
            }
        }
    }

    /**
     * The last {@code LAST_INSERT_ID(expr)} the acquire evaluated (every path through it evaluates one). The
     * drivers hand out as many generated keys as rows were counted: with changed-row counts
     * ({@code useAffectedRows=true}) a refusal counts none, and the session's {@code LAST_INSERT_ID()} is
     * read instead, a second round trip for those refusals only.
     */
    private static long insertId(Connection c, PreparedStatement ps) throws SQLException {
        try (ResultSet keys = ps.getGeneratedKeys()) {
            if (keys.next()) {
                return keys.getLong(1);
            }
        }
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT LAST_INSERT_ID()")) {
            return rs.next() ? rs.getLong(1) : 0;
        }
    }
}
