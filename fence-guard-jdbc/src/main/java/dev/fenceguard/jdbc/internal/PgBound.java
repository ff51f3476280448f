package dev.fenceguard.jdbc.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Statements bounded on the server: each is sent after {@link #BOUND} in one round trip, so
 * {@code lock_timeout} and {@code statement_timeout} hold for exactly that statement's transaction (one
 * Sync, so one transaction even in auto-commit) and revert afterwards, leaving the pool's connection as
 * it was. Shared by the lock backend and the flight store.
 */
public final class PgBound {

    /** The prefix of every bounded statement; the statement's own parameters start at 3. */
    public static final String BOUND = "SELECT set_config('lock_timeout', ?, true), set_config('statement_timeout', ?, true); ";

    private PgBound() {}

    /** {@code sql} (which starts with {@link #BOUND}) prepared, with the bound set to the time the call has left. */
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
}
