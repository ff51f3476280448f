package dev.fenceguard.jdbc;

import static dev.fenceguard.jdbc.internal.BoundStatements.BOUND;
import static dev.fenceguard.jdbc.internal.BoundStatements.BOUND_UNFLUSHED;
import static dev.fenceguard.jdbc.internal.BoundStatements.countAfterBound;
import static dev.fenceguard.jdbc.internal.BoundStatements.instant;
import static dev.fenceguard.jdbc.internal.BoundStatements.prepare;
import static dev.fenceguard.jdbc.internal.BoundStatements.resultAfterBound;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.core.internal.PurgeLoop;
import dev.fenceguard.core.internal.WarmUps;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.internal.BoundedJdbc;
import dev.fenceguard.jdbc.internal.PgErrors;
import dev.fenceguard.jdbc.internal.TableSettings;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import javax.sql.DataSource;

/**
 * A lock backend on a PostgreSQL table (13 or newer), one row per lock key.
 *
 * Handed out by {@link FenceGuardJdbc#lockBackend()} on PostgreSQL, on a table created by
 * {@code FenceGuardMigrations.migrate(dataSource)}.
 *
 * <p>Every operation is one SQL statement, atomic on the server and judged by the server's
 * {@code clock_timestamp()} (not {@code now()}, which is the start of the transaction and already
 * stale after waiting on a row lock). Acquisition is one
 * {@code INSERT .. ON CONFLICT DO UPDATE .. WHERE <free or expired> RETURNING fence}: the fence counter
 * lives in the lock's row, is raised only on success, and is never deleted. Only a refused acquisition
 * may take a second statement, to tell "held" from "fences exhausted".
 *
 * <p><b>Threads.</b> JDBC blocks, so every call runs on an executor and the methods return at once:
 * by default a new virtual thread per call ({@link FenceGuardJdbc.Builder#withExecutor} to supply your own). The
 * caller's thread never waits for the database, with one exception that only saves work: the blocking
 * {@code LockClient}, whose platform thread would only wait for the call, lends it, and with the default
 * executor the call runs right there, bounded as on the executor (docs/postgresql.md, "Threads and time bounds").
 *
 * <p><b>Bounds.</b> Each call is bounded by the {@code timeout} it is given, on the server as well as
 * here: in the same round trip as the statement, {@code set_config('lock_timeout', ..)} and
 * {@code set_config('statement_timeout', ..)} are set, local to the statement's transaction, to the
 * time the call has left, so a row lock held by another connection cannot hold the call past its
 * timeout (PostgreSQL cancels the statement with SQLSTATE 55P03 or 57014, reported as
 * {@link ErrorCode#TIMEOUT}). The stage completes with what the server answered; a call still running
 * half a second after its timeout has its connection aborted ({@link java.sql.Connection#abort}, on
 * fence-guard's one timer thread), so a server that stopped answering pins neither a thread nor a pool
 * connection. Waiting for a pool connection counts against the timeout too: a call whose time ran out
 * before it was sent fails with {@code TIMEOUT} without sending. Ending the caller's wait at the timeout
 * and releasing a grant that arrives after it are the lock client's (see {@link LockBackend}).
 *
 * <p>Connections come from the {@link DataSource} for one call each; if the pool hands them out with
 * auto-commit off, the backend commits. Instances are immutable and thread-safe.
 *
 * @since 0.1
 */
final class PostgresLockBackend implements LockBackend, LockRowPurge {

    private final Executor executor;
    private final BoundedJdbc calls;
    private final String table;
    private final FenceStrategy strategy;
    private final String acquireSql;
    private final String diagnoseSql;
    private final String releaseSql;
    private final String extendSql;
    private final String lookupSql;
    /** The lock table's name, its row in the floor table. */
    private final String tableName;
    private final String lockFloorSql;
    private final String purgeSql;
    // Built once: a string concatenation in a call is linked on its first run, which a warm-up cannot reach.
    /** How many parameters the DENSE acquisition adds before the key's (the key and the table, for its floor). */
    private final int keyParams;
    private final String acquireOp;
    private final String releaseOp;
    private final String extendOp;
    private final String lookupOp;

    PostgresLockBackend(TableSettings b) {
        this.executor = b.executor();
        this.calls = new BoundedJdbc(b.dataSource(), executor, PgErrors.naming(LockRowPurge.tablesUsed(b, '"')));
        this.strategy = b.strategy();
        this.table = b.doubleQuoted();
        String expiry = "clock_timestamp() + (?::bigint * interval '1 millisecond')";
        // FenceStrategy.CLOCK_FLOORED's floor in 10 µs ticks (extract: exact numeric on 14+, a double good to ~1 µs on 13).
        String floor = "floor((extract(epoch from clock_timestamp()) * 1000000 - " + ClockFloor.EPOCH_MILLIS * 1000
                + ") / " + ClockFloor.MICROS_PER_FENCE + ")::bigint";
        this.tableName = b.table();
        String floors = "\"" + b.schema() + "\".\"" + LockRowPurge.FLOOR_TABLE + "\"";
        // DENSE: a key without a row starts above the table's floor, the highest fence a purge removed
        // (docs/fence-lifecycle.md, "DENSE fences"). The floor is read only when the key has no row: the
        // row, if there is one, is locked FOR KEY SHARE (so that a purge skips it, or has removed it by the
        // time the lock is granted: a locking read waits for the purge and then finds no row), else the floor
        // is read FOR SHARE, which waits for a purge holding it FOR UPDATE and returns its committed value.
        // Both are uncorrelated subqueries, evaluated lazily: an existing key's acquisition never touches the
        // floor row, which would otherwise be one hot row share-locked by every acquisition.
        String firstFence = strategy == FenceStrategy.DENSE
                ? "CASE WHEN EXISTS (SELECT 1 FROM " + table + " WHERE lock_key = ? FOR KEY SHARE) THEN 1 ELSE GREATEST(1, "
                        + "(SELECT fence_floor + 1 FROM " + floors + " WHERE lock_table = ? FOR SHARE)) END"
                : "GREATEST(1, " + floor + ")";
        this.keyParams = strategy == FenceStrategy.DENSE ? 2 : 0;
        String nextFence = strategy == FenceStrategy.DENSE ? "l.fence + 1" : "GREATEST(l.fence + 1, " + floor + ")";
        // CLOCK_FLOORED: grants, releases and extensions commit without waiting for the WAL flush. A crash may lose
        // the latest of them, and that is safe (docs/postgresql.md, "Commits that do not wait for the disk"): a lost
        // grant or extension is a lease lost early, which the fence makes harmless at the resource, because the next
        // fence comes from the clock and is above every fence issued before the crash; a lost release keeps the key
        // until its expiry. DENSE fences come from the row alone: a lost increment would be issued again, so DENSE
        // keeps the connection's own setting.
        String write = strategy == FenceStrategy.DENSE ? BOUND : BOUND_UNFLUSHED;
        this.acquireSql = write + "INSERT INTO " + table + " AS l (lock_key, fence, lock_id, expires_at, acquired_at) "
                + "VALUES (?, " + firstFence + ", ?, " + expiry + ", clock_timestamp()) "
                + "ON CONFLICT (lock_key) DO UPDATE SET fence = " + nextFence + ", lock_id = EXCLUDED.lock_id, "
                + "expires_at = " + expiry + ", acquired_at = clock_timestamp() "
                + "WHERE (l.lock_id IS NULL OR l.expires_at <= clock_timestamp()) AND " + nextFence + " <= " + FenceToken.MAX_VALUE
                + " RETURNING fence, expires_at";
        this.diagnoseSql = BOUND + "SELECT " + nextFence + " FROM " + table
                + " l WHERE lock_key = ? AND (lock_id IS NULL OR expires_at <= clock_timestamp())";
        this.releaseSql = write + "UPDATE " + table + " SET lock_id = NULL, expires_at = NULL "
                + "WHERE lock_key = ? AND lock_id = ? AND expires_at > clock_timestamp()";
        this.extendSql = write + "UPDATE " + table + " SET expires_at = " + expiry
                + " WHERE lock_key = ? AND lock_id = ? AND expires_at > clock_timestamp() RETURNING expires_at";
        this.lookupSql = BOUND + "SELECT fence, expires_at FROM " + table
                + " WHERE lock_key = ? AND lock_id IS NOT NULL AND expires_at > clock_timestamp()";
        this.lockFloorSql = BOUND + "SELECT fence_floor FROM " + floors + " WHERE lock_table = ? FOR UPDATE";
        String free = "(l.lock_id IS NULL OR l.expires_at <= clock_timestamp())";
        // CLOCK_FLOORED: only rows whose fence is below tick(clock - margin); an uncorrelated scalar subquery, so
        // that the clock is read once and the condition can use an index (clock_timestamp() alone is volatile).
        String old = strategy == FenceStrategy.DENSE ? "" : " AND l.fence < (SELECT floor((extract(epoch from clock_timestamp())"
                + " * 1000000 - ?::bigint - " + ClockFloor.EPOCH_MILLIS * 1000 + ") / " + ClockFloor.MICROS_PER_FENCE + ")::bigint)";
        // d deletes by key = any(array(..)): an index scan on the candidates whatever the table's statistics say (a
        // join planned from stale statistics, after a mass release, can scan the table once per candidate).
        // One statement: c locks the candidates (SKIP LOCKED: a row an acquisition holds, or is taking, is left
        // for a later purge), d removes them with the condition again (read committed re-checks it against the
        // newest version of a row that changed since the statement began), u raises the floor (locked FOR UPDATE
        // by the batch's first statement) to the highest fence removed.
        this.purgeSql = BOUND + "WITH c AS (SELECT l.lock_key FROM " + table + " l WHERE l.lock_key > ? AND " + free + old
                + " ORDER BY l.lock_key LIMIT ? FOR UPDATE SKIP LOCKED), "
                + "d AS (DELETE FROM " + table + " l WHERE l.lock_key = any(array(SELECT lock_key FROM c)) AND " + free + old
                + " RETURNING l.fence), "
                + "u AS (UPDATE " + floors + " SET fence_floor = GREATEST(fence_floor, (SELECT max(fence) FROM d)) "
                + "WHERE lock_table = ? AND EXISTS (SELECT 1 FROM d) RETURNING fence_floor) "
                + "SELECT (SELECT count(*) FROM c), (SELECT max(lock_key) FROM c), (SELECT count(*) FROM d), (SELECT count(*) FROM u)";
        this.acquireOp = "acquire on " + table;
        this.releaseOp = "release on " + table;
        this.extendOp = "extend on " + table;
        this.lookupOp = "lookup on " + table;
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
    public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return calls.submit(key.value(), acquireOp, timeout, acquireWork(key.value(), lockId, ttl));
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
        return calls.submit(key.value(), releaseOp, timeout, releaseWork(key.value(), lockId));
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return calls.submit(key.value(), extendOp, timeout, extendWork(key.value(), lockId, ttl));
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        return calls.submit(key.value(), lookupOp, timeout, lookupWork(key.value(), key));
    }

    // The work of each call comes from these methods, which the warm-up runs too: each lambda is linked
    // on the first run of the line that creates it, so a warm-up must run these very lines.

    private BoundedJdbc.Work<Optional<Grant>> acquireWork(String key, LockId lockId, Duration ttl) {
        return (c, left) -> acquire(c, left, key, lockId, ttl);
    }

    private BoundedJdbc.Work<Boolean> releaseWork(String key, LockId lockId) {
        return (c, left) -> release(c, left, key, lockId);
    }

    private BoundedJdbc.Work<Optional<Instant>> extendWork(String key, LockId lockId, Duration ttl) {
        return (c, left) -> extend(c, left, key, lockId, ttl);
    }

    /** {@code reported} is the key the answer names: {@code key} itself, but for the warm-up's internal key, which no LockKey can be. */
    private BoundedJdbc.Work<Optional<LockInfo>> lookupWork(String key, LockKey reported) {
        return (c, left) -> lookup(c, left, key).map(live -> new LockInfo(reported, FenceToken.of(live.fence()), live.expiresAt()));
    }

    /**
     * Gets ready for the first calls by making each of them once, for the internal key {@code ''} (the
     * empty string, which no lock key can be: keys are 1 to 512 bytes), in one transaction that is
     * rolled back: an acquisition, a refused one, an extension, a lookup and a release, with the same
     * code and statements as real calls. No user key is locked or touched, and the rollback leaves
     * nothing behind. It fails if the lock table or a column is missing. Concurrent warm-ups of several
     * processes wait for each other's rollback on that one key (within the timeout). With a pool, the
     * connection it used keeps its parsed statements; the others parse them on first use. It also sends
     * {@code SELECT pg_sleep(0.005)}, so that the executor's thread waits on the socket once (on a virtual
     * thread, the first such wait starts the JDK's I/O poller).
     *
     * @since 0.1
     */
    @Override
    public CompletionStage<Void> warmUp(Duration timeout) {
        return calls.submit(null, "warm-up on " + table, timeout, BoundedJdbc.rolledBack((c, left) -> {
            // One answer that takes the server a moment, so that this thread waits on the socket once:
            // on a virtual thread (the default executor) the first such wait of the process starts the
            // JDK's I/O poller (several ms), which the first real call paid when the warm-up's own
            // answers happened to be there before they were read.
            try (Statement st = c.createStatement()) {
                st.execute("SELECT pg_sleep(0.005)");
            }
            return WarmUps.everyLockPath((holder, ttl) -> acquireWork(WARM_UP_KEY, holder, ttl).apply(c, left).isPresent(),
                    (holder, ttl) -> extendWork(WARM_UP_KEY, holder, ttl).apply(c, left).isPresent(),
                    (holder, ttl) -> lookupWork(WARM_UP_KEY, WARM_UP_LOCK_KEY).apply(c, left).isPresent(),
                    (holder, ttl) -> releaseWork(WARM_UP_KEY, holder).apply(c, left));
        })).thenApply(allRan -> null);
    }

    /** The internal key of warm-ups: no {@link LockKey} is empty. */
    private static final String WARM_UP_KEY = "";
    /** Stands for {@link #WARM_UP_KEY} where the code needs a LockKey; it names no row the warm-up touches. */
    private static final LockKey WARM_UP_LOCK_KEY = LockKey.of("warm-up");

    private Optional<Grant> acquire(Connection c, BoundedJdbc.TimeLeft left, String key, LockId lockId, Duration ttl) throws SQLException {
        try (PreparedStatement ps = prepare(c, acquireSql, left)) {
            ps.setString(3, key);
            if (keyParams > 0) {
                ps.setString(4, key);
                ps.setString(5, tableName);
            }
            ps.setString(4 + keyParams, lockId.value());
            ps.setLong(5 + keyParams, ttl.toMillis());
            ps.setLong(6 + keyParams, ttl.toMillis());
            try (ResultSet rs = resultAfterBound(ps)) {
                if (rs.next()) {
                    return Optional.of(new Grant(rs.getLong(1), instant(rs, 2)));
                }
            }
        }
        // Refused: held by a live lease, or free but out of fences. Only this path pays a second statement.
        try (PreparedStatement ps = prepare(c, diagnoseSql, left)) {
            ps.setString(3, key);
            try (ResultSet rs = resultAfterBound(ps)) {
                if (rs.next() && rs.getLong(1) > FenceToken.MAX_VALUE) {
                    throw new FenceGuardException(ErrorCode.FENCE_EXHAUSTED, key, "the key has issued its last fence "
                            + "(next would be " + rs.getLong(1) + " > " + FenceToken.MAX_VALUE + "); no lock was taken");
                }
            }
        }
        return Optional.empty();
    }

    private boolean release(Connection c, BoundedJdbc.TimeLeft left, String key, LockId lockId) throws SQLException {
        try (PreparedStatement ps = prepare(c, releaseSql, left)) {
            ps.setString(3, key);
            ps.setString(4, lockId.value());
            ps.execute();
            ps.getMoreResults(); // past the bound's row to the UPDATE's count
            return ps.getUpdateCount() == 1;
        }
    }

    private Optional<Instant> extend(Connection c, BoundedJdbc.TimeLeft left, String key, LockId lockId, Duration ttl) throws SQLException {
        try (PreparedStatement ps = prepare(c, extendSql, left)) {
            ps.setLong(3, ttl.toMillis());
            ps.setString(4, key);
            ps.setString(5, lockId.value());
            try (ResultSet rs = resultAfterBound(ps)) {
                return rs.next() ? Optional.of(instant(rs, 1)) : Optional.empty();
            }
        }
    }

    /** The fence and expiry of the live lease on {@code key}, as a grant's two values. */
    private Optional<Grant> lookup(Connection c, BoundedJdbc.TimeLeft left, String key) throws SQLException {
        try (PreparedStatement ps = prepare(c, lookupSql, left)) {
            ps.setString(3, key);
            try (ResultSet rs = resultAfterBound(ps)) {
                return rs.next() ? Optional.of(new Grant(rs.getLong(1), instant(rs, 2))) : Optional.empty();
            }
        }
    }

    @Override
    public CompletableFuture<PurgeLoop.Batch<String>> purgeBatch(String after, int size, long marginMicros, Duration timeout) {
        return calls.submit(null, "purge of lock rows on " + table, timeout, LockRowPurge.inTransaction((c, left) -> {
            try (PreparedStatement ps = prepare(c, lockFloorSql, left)) {
                ps.setString(3, tableName);
                try (ResultSet rs = resultAfterBound(ps)) {
                    if (!rs.next()) {
                        throw LockRowPurge.missingFloor(table, tableName);
                    }
                }
            }
            try (PreparedStatement ps = prepare(c, purgeSql, left)) {
                int i = 3;
                ps.setString(i++, after);
                if (strategy != FenceStrategy.DENSE) {
                    ps.setLong(i++, marginMicros);
                }
                ps.setInt(i++, size);
                if (strategy != FenceStrategy.DENSE) {
                    ps.setLong(i++, marginMicros);
                }
                ps.setString(i, tableName);
                try (ResultSet rs = resultAfterBound(ps)) {
                    rs.next();
                    return new PurgeLoop.Batch<>(rs.getInt(1), rs.getString(2), rs.getLong(3));
                }
            }
        }));
    }

    /** The executor the calls run on. */
    public Executor executor() {
        return executor;
    }

    @Override
    public String toString() {
        return "PostgresLockBackend[" + table + ", " + strategy + ", " + executor + "]";
    }
}
