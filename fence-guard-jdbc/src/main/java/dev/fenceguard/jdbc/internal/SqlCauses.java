package dev.fenceguard.jdbc.internal;

import java.sql.SQLException;
import java.util.Optional;

/**
 * Finds the database's own error in a cause chain. jOOQ wraps a driver's {@link SQLException} in its
 * {@code DataAccessException}, a pool or a framework's exception translator may wrap it again, and the
 * outer {@code SQLException} of a wrapper may carry no SQLSTATE while one further in does; errors are
 * mapped by the state the database reported, wherever in the chain it is.
 */
public final class SqlCauses {

    private static final int MAX_DEPTH = 16;

    private SqlCauses() {}

    /**
     * The first {@link SQLException} in {@code t}'s cause chain ({@code t} included) that has a SQLSTATE,
     * else the first one without; empty if there is none.
     */
    public static Optional<SQLException> of(Throwable t) {
        SQLException first = null;
        Throwable c = t;
        for (int depth = 0; c != null && depth < MAX_DEPTH; depth++, c = c.getCause()) {
            if (c instanceof SQLException sql) {
                if (sql.getSQLState() != null) {
                    return Optional.of(sql);
                }
                if (first == null) {
                    first = sql;
                }
            }
        }
        return Optional.ofNullable(first);
    }
}
