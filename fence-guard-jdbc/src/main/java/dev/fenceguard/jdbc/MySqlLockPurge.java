package dev.fenceguard.jdbc;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.core.internal.PurgeLoop;
import dev.fenceguard.jdbc.internal.BoundedJdbc;
import dev.fenceguard.jdbc.internal.TableSettings;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One batch of the purge of free lock rows on MariaDB and MySQL (the same table; docs/fence-lifecycle.md),
 * in one transaction at read committed: the floor row locked {@code FOR UPDATE}; the candidates selected
 * {@code FOR UPDATE SKIP LOCKED} (MariaDB 10.6+, MySQL 8.0+; InnoDB's locking reads judge the newest
 * version of each row, and a row an acquisition holds or is taking is skipped); those rows deleted by key,
 * the condition checked again; the floor raised to the highest fence selected. Read committed, because
 * under repeatable read the locking scan would also lock every row and gap it passes over.
 */
final class MySqlLockPurge {

    /** How a backend prepares its statements (MariaDB's carry their server-side bounds). */
    interface Statements {
        PreparedStatement prepare(Connection c, String sql, BoundedJdbc.TimeLeft left) throws SQLException;
    }

    /** The most keys one {@code DELETE .. IN (..)} names: a batch may hold more keys than a statement may bind. */
    private static final int KEYS_PER_DELETE = 1_000;

    private final String table;
    private final String tableName;
    private final String lockFloorSql;
    private final String selectSql;
    private final String deleteSql; // %s: the key placeholders
    private final String raiseSql;
    private final boolean dense;
    private final Statements statements;

    MySqlLockPurge(TableSettings b, Statements statements) {
        this.statements = statements;
        this.table = b.backQuoted();
        this.tableName = b.table();
        this.dense = b.strategy() == FenceStrategy.DENSE;
        String floors = "`" + b.schema() + "`.`" + LockRowPurge.FLOOR_TABLE + "`";
        // UTC_TIMESTAMP(6) is the statement's start: a row is judged expired, and a fence old, a moment late, never early.
        String free = "(lock_id IS NULL OR expires_at <= UTC_TIMESTAMP(6))";
        String old = dense ? "" : " AND fence < (TIMESTAMPDIFF(MICROSECOND, TIMESTAMP'1970-01-01 00:00:00', UTC_TIMESTAMP(6)) - ? - "
                + ClockFloor.EPOCH_MILLIS * 1000 + ") DIV " + ClockFloor.MICROS_PER_FENCE;
        this.lockFloorSql = "SELECT fence_floor FROM " + floors + " WHERE lock_table = ? FOR UPDATE";
        this.selectSql = "SELECT lock_key, fence FROM " + table + " WHERE lock_key > ? AND " + free + old
                + " ORDER BY lock_key LIMIT ? FOR UPDATE SKIP LOCKED";
        this.deleteSql = "DELETE FROM " + table + " WHERE lock_key IN (%s) AND " + free + old;
        this.raiseSql = "UPDATE " + floors + " SET fence_floor = GREATEST(fence_floor, ?) WHERE lock_table = ?";
    }

    PurgeLoop.Batch<String> batch(Connection c, BoundedJdbc.TimeLeft left, String after, int size, long marginMicros) throws SQLException {
        try (PreparedStatement ps = statements.prepare(c, lockFloorSql, left)) {
            ps.setString(1, tableName);
            try (ResultSet rs = query(ps)) {
                if (!rs.next()) {
                    throw LockRowPurge.missingFloor(table, tableName);
                }
            }
        }
        List<byte[]> keys = new ArrayList<>();
        long highest = 0;
        try (PreparedStatement ps = statements.prepare(c, selectSql, left)) {
            int i = 1;
            ps.setBytes(i++, after.getBytes(StandardCharsets.UTF_8));
            if (!dense) {
                ps.setLong(i++, marginMicros);
            }
            ps.setInt(i, size);
            try (ResultSet rs = query(ps)) {
                while (rs.next()) {
                    keys.add(rs.getBytes(1));
                    highest = Math.max(highest, rs.getLong(2));
                }
            }
        }
        long removed = 0;
        for (int from = 0; from < keys.size(); from += KEYS_PER_DELETE) {
            List<byte[]> chunk = keys.subList(from, Math.min(keys.size(), from + KEYS_PER_DELETE));
            String sql = String.format(deleteSql, String.join(", ", Collections.nCopies(chunk.size(), "?")));
            try (PreparedStatement ps = statements.prepare(c, sql, left)) {
                int i = 1;
                for (byte[] key : chunk) {
                    ps.setBytes(i++, key);
                }
                if (!dense) {
                    ps.setLong(i, marginMicros);
                }
                removed += ps.executeUpdate();
            }
        }
        if (removed > 0) {
            // The highest fence selected: the rows were locked when read, so what was deleted is among them.
            try (PreparedStatement ps = statements.prepare(c, raiseSql, left)) {
                ps.setLong(1, highest);
                ps.setString(2, tableName);
                ps.executeUpdate();
            }
        }
        String last = keys.isEmpty() ? null : new String(keys.getLast(), StandardCharsets.UTF_8);
        return new PurgeLoop.Batch<>(keys.size(), last, removed);
    }

    /** The rows of a query (Connector/J's {@code executeQuery} refuses one behind MariaDB's {@code SET STATEMENT}). */
    private static ResultSet query(PreparedStatement ps) throws SQLException {
        if (!ps.execute()) {
            throw new SQLException("the query returned no rows", "HY000");
        }
        return ps.getResultSet();
    }

    /** {@code work} at read committed, the connection's isolation level restored afterwards. */
    static <T> BoundedJdbc.Work<T> readCommitted(BoundedJdbc.Work<T> work) {
        return (c, left) -> {
            int isolation = c.getTransactionIsolation();
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            try {
                return work.apply(c, left);
            } finally {
                c.setTransactionIsolation(isolation);
            }
        };
    }
}
