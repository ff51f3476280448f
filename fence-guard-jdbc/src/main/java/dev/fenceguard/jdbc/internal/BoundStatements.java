package dev.fenceguard.jdbc.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;

/**
 * Statements that carry their own server-side bound: each starts with {@link #BOUND}, which sets
 * {@code lock_timeout} and {@code statement_timeout} to the time the call has left, in the same round
 * trip and local to the statement's transaction.
 */
public final class BoundStatements {

    /**
     * Sent in the same round trip as each statement (one Sync, so one transaction even in auto-commit):
     * both settings revert when that transaction ends, and the pool's connection keeps its own.
     */
    public static final String BOUND = "SELECT set_config('lock_timeout', ?, true), set_config('statement_timeout', ?, true); ";

    /**
     * {@link #BOUND} that also lets the statement's transaction commit without waiting for its WAL flush
     * ({@code synchronous_commit = off}, local to that transaction, in the same round trip: sent as separate
     * statements it gains nothing). A crash of the server may then lose the latest such commits, never
     * anything older, and never break the database's consistency. Only for the lock statements of
     * {@code CLOCK_FLOORED} tables, which tolerate that loss (docs/postgresql.md, "Commits that do not wait
     * for the disk").
     */
    public static final String BOUND_UNFLUSHED = "SELECT set_config('lock_timeout', ?, true), set_config('statement_timeout', ?, true), "
            + "set_config('synchronous_commit', 'off', true); ";

    private BoundStatements() {}

    /**
     * {@code sql} (which starts with {@link #BOUND}) with the bound's two parameters set to the time the
     * call has left; the statement's own parameters start at 3.
     */
    public static PreparedStatement prepare(Connection c, String sql, BoundedJdbc.TimeLeft left) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql);
        try {
            String millis = Integer.toString(left.millis());
            ps.setString(1, millis);
            ps.setString(2, millis);
            return ps;
        } catch (SQLException | RuntimeException e) {
            ps.close();
            throw e;
        }
    }

    /** Runs {@code ps} and returns the result set of the statement after the bound's {@code SELECT}. */
    public static ResultSet resultAfterBound(PreparedStatement ps) throws SQLException {
        ps.execute();
        if (!ps.getMoreResults()) {
            throw new SQLException("the statement after the timeout settings returned no rows", "XX000");
        }
        return ps.getResultSet();
    }

    /** Runs {@code ps} and returns the update count of the statement after the bound's {@code SELECT}. */
    public static int countAfterBound(PreparedStatement ps) throws SQLException {
        ps.execute();
        ps.getMoreResults(); // past the bound's row to the statement's count
        return ps.getUpdateCount();
    }

    /** A {@code timestamptz} column as an instant. */
    public static Instant instant(ResultSet rs, int column) throws SQLException {
        return rs.getObject(column, OffsetDateTime.class).toInstant();
    }
}
