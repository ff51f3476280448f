package dev.fenceguard.jdbc;

import static dev.fenceguard.jdbc.internal.BoundStatements.BOUND;
import static dev.fenceguard.jdbc.internal.BoundStatements.countAfterBound;
import static dev.fenceguard.jdbc.internal.BoundStatements.instant;
import static dev.fenceguard.jdbc.internal.BoundStatements.prepare;
import static dev.fenceguard.jdbc.internal.BoundStatements.resultAfterBound;

import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyEntry;
import dev.fenceguard.core.spi.IdempotencyState;
import dev.fenceguard.jdbc.internal.BoundedJdbc;
import dev.fenceguard.jdbc.internal.TableSettings;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import javax.sql.DataSource;

/**
 * An idempotency backend on a PostgreSQL table (13 or newer), one row per idempotency key, for a
 * {@link dev.fenceguard.core.idempotency.IdempotencyStore}.
 *
 * Handed out by {@link FenceGuardJdbc#idempotencyBackend()} on PostgreSQL, on a table created by
 * {@code FenceGuardMigrations.idempotencyBuilder(dataSource).migrate()}.
 *
 * <p>Claim and record are one SQL statement each, judged by the server's {@code clock_timestamp()}.
 * The claim reads the row first: a live entry that is final or has another fingerprint stays as it is
 * whatever the claim, so it is returned and nothing is written (a replay is a read). Otherwise the claim
 * is one {@code INSERT .. ON CONFLICT DO UPDATE} whose update keeps every column unless the claim takes
 * the key over (the rules of {@link dev.fenceguard.core.spi.IdempotencyRules}, with one reading of the
 * clock, on the latest version of the row under its lock), and returns the row as it then stands: the
 * caller's own claim, or what stopped it. The record is one {@code UPDATE .. WHERE fence = ? AND state = 'P'} in a statement that
 * also returns the row's fence when it refused. The purge deletes one batch of expired rows, skipping
 * rows another purge has locked.
 *
 * <p>Threads and bounds as for {@link PostgresLockBackend}: each call runs on the executor (a virtual
 * thread per call by default), the server is told the time the call has left, and the stage fails with
 * {@code TIMEOUT} at the deadline. The table layout is in {@code docs/idempotency-store.md}.
 * Immutable and thread-safe.
 *
 * @since 0.1
 */
final class PostgresIdempotencyBackend implements IdempotencyBackend {

    private final Executor executor;
    private final BoundedJdbc calls;
    private final String table;
    private final String claimSql;
    private final String recordSql;
    private final String lookupSql;
    private final String purgeSql;

    PostgresIdempotencyBackend(TableSettings b) {
        this.executor = b.executor();
        this.calls = new BoundedJdbc(b.dataSource(), executor);
        this.table = b.doubleQuoted();
        String columns = "state, fingerprint, fence, expires_at, retain_until, result";
        // The claim's rules, judged at one reading of the clock ("now", recovered from the proposed row).
        String takes = "e.retain_until <= n.now OR (e.fingerprint = EXCLUDED.fingerprint AND ("
                + "(e.state = 'R' AND EXCLUDED.fence >= e.fence) OR (e.state = 'P' AND (EXCLUDED.fence = e.fence "
                + "OR (EXCLUDED.fence > e.fence AND e.expires_at <= n.now)))))";
        StringBuilder chosen = new StringBuilder();
        for (String c : columns.split(", ")) {
            chosen.append(chosen.isEmpty() ? "" : ", ").append("CASE WHEN x.takes THEN EXCLUDED.").append(c).append(" ELSE e.")
                    .append(c).append(" END");
        }
        // A live entry that is final, or that has another fingerprint, stays as it is whatever the claim:
        // then the statement only reads (no row lock, no transaction id, no WAL), which is what a replay
        // costs. Otherwise the upsert decides under the row lock, on the latest version of the row.
        this.claimSql = BOUND + "WITH cur AS (SELECT " + columns + ", retain_until > clock_timestamp() "
                + "AND (state IN ('C', 'F') OR fingerprint <> ?) AS stays FROM " + table + " WHERE idem_key = ?), "
                + "claimed AS (INSERT INTO " + table + " AS e (idem_key, " + columns + ") "
                + "SELECT ?, 'P', ?, ?, n.now + ?::bigint * interval '1 millisecond', n.now + ?::bigint * interval '1 millisecond', "
                + "''::bytea FROM (SELECT clock_timestamp() AS now) n WHERE NOT EXISTS (SELECT 1 FROM cur WHERE stays) "
                + "ON CONFLICT (idem_key) DO UPDATE SET (" + columns + ") = (SELECT " + chosen
                + " FROM (SELECT EXCLUDED.expires_at - ?::bigint * interval '1 millisecond' AS now) n, "
                + "LATERAL (SELECT (" + takes + ") AS takes) x) RETURNING " + columns + ") "
                + "SELECT " + columns + " FROM claimed UNION ALL SELECT " + columns + " FROM cur WHERE stays";
        this.recordSql = BOUND + "WITH r AS (UPDATE " + table + " SET state = ?, result = ?, expires_at = clock_timestamp(), "
                + "retain_until = clock_timestamp() + ?::bigint * interval '1 millisecond' "
                + "WHERE idem_key = ? AND fence = ? AND state = 'P' AND retain_until > clock_timestamp() RETURNING 1) "
                + "SELECT (SELECT count(*) FROM r), (SELECT fence FROM " + table
                + " WHERE idem_key = ? AND retain_until > clock_timestamp())";
        this.lookupSql = BOUND + "SELECT " + columns + " FROM " + table + " WHERE idem_key = ? AND retain_until > clock_timestamp()";
        this.purgeSql = BOUND + "DELETE FROM " + table + " WHERE idem_key IN (SELECT idem_key FROM " + table
                + " WHERE retain_until <= clock_timestamp() ORDER BY retain_until LIMIT ? FOR UPDATE SKIP LOCKED)";
    }

    @Override
    public String name() {
        return "postgres";
    }

    @Override
    public CompletionStage<IdempotencyEntry> claim(LockKey key, String fingerprint, long fence, Duration ttl, Duration retention,
            Duration timeout) {
        return calls.submit(key.value(), "idempotency claim on " + table, timeout, (c, left) -> {
            try (PreparedStatement ps = prepare(c, claimSql, left)) {
                ps.setString(3, fingerprint);
                ps.setString(4, key.value());
                ps.setString(5, key.value());
                ps.setString(6, fingerprint);
                ps.setLong(7, fence);
                ps.setLong(8, ttl.toMillis());
                ps.setLong(9, ttl.toMillis() + retention.toMillis());
                ps.setLong(10, ttl.toMillis());
                try (ResultSet rs = resultAfterBound(ps)) {
                    if (!rs.next()) {
                        throw new SQLException("the claim returned no row", "XX000");
                    }
                    return entry(rs);
                }
            }
        });
    }

    @Override
    public CompletionStage<OptionalLong> record(LockKey key, long fence, IdempotencyState state, byte[] result, Duration retention,
            Duration timeout) {
        return calls.submit(key.value(), "idempotency record on " + table, timeout, (c, left) -> {
            try (PreparedStatement ps = prepare(c, recordSql, left)) {
                ps.setString(3, String.valueOf(state.code()));
                ps.setBytes(4, result);
                ps.setLong(5, retention.toMillis());
                ps.setString(6, key.value());
                ps.setLong(7, fence);
                ps.setString(8, key.value());
                try (ResultSet rs = resultAfterBound(ps)) {
                    rs.next();
                    return rs.getLong(1) == 1 ? OptionalLong.empty() : OptionalLong.of(rs.getLong(2)); // NULL fence reads as 0
                }
            }
        });
    }

    @Override
    public CompletionStage<Optional<IdempotencyEntry>> lookup(LockKey key, Duration timeout) {
        return calls.submit(key.value(), "idempotency lookup on " + table, timeout, (c, left) -> {
            try (PreparedStatement ps = prepare(c, lookupSql, left)) {
                ps.setString(3, key.value());
                try (ResultSet rs = resultAfterBound(ps)) {
                    return rs.next() ? Optional.of(entry(rs)) : Optional.<IdempotencyEntry>empty();
                }
            }
        });
    }

    @Override
    public CompletionStage<Integer> purge(int limit, Duration timeout) {
        return calls.submit(null, "idempotency purge on " + table, timeout, (c, left) -> {
            try (PreparedStatement ps = prepare(c, purgeSql, left)) {
                ps.setInt(3, limit);
                return countAfterBound(ps);
            }
        });
    }

    private static IdempotencyEntry entry(ResultSet rs) throws SQLException {
        return new IdempotencyEntry(IdempotencyState.ofCode(rs.getString(1).charAt(0)), rs.getString(2), rs.getLong(3),
                instant(rs, 4), instant(rs, 5), rs.getBytes(6));
    }

    /** The executor the calls run on. */
    public Executor executor() {
        return executor;
    }

    @Override
    public String toString() {
        return "PostgresIdempotencyBackend[" + table + ", " + executor + "]";
    }
}
