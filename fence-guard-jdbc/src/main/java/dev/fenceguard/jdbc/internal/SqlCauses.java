package dev.fenceguard.jdbc.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.Redacted;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

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

    /** The hint added to an undefined-table error: the server's own words are withheld, so say what to check. */
    static final String TABLE_HINT = " (does the table exist? create it with FenceGuardMigrations or your own Flyway)";

    /**
     * What one database says of its errors: the code, the facts a message may carry (never the server's
     * words), and whether an error is an undefined table.
     */
    record Vendor(Function<SQLException, ErrorCode> code, Function<SQLException, String> facts,
            Predicate<SQLException> undefinedTable) {

        /** A {@link FenceGuardException} for {@code e}; {@code tableHint} is added if {@code e} is an undefined table. */
        FenceGuardException map(SQLException e, String key, String operation, String tableHint) {
            SQLException source = of(e).orElse(e);
            String facts = facts().apply(source);
            String hint = undefinedTable().test(source) ? tableHint : "";
            return new FenceGuardException(code().apply(e), key, operation + " failed: " + facts + hint, redacted(source, facts));
        }

        /** Maps any exception a call ended with, naming {@code tables} in the hint of an undefined-table error. */
        BoundedJdbc.Errors naming(String tables) {
            String hint = " (does " + tables + " exist? create them with FenceGuardMigrations or your own Flyway)";
            return (e, key, operation) -> SqlCauses.map(e, key, operation, (sql, k, op) -> map(sql, k, op, hint));
        }
    }

    /**
     * The code the JDBC exception type or the SQLSTATE's standard class gives, the same on every database:
     * timeouts and transient connections by type; connection exceptions ({@code 08}), authorization ({@code 28}),
     * data exceptions and syntax or undefined objects ({@code 22}, {@code 42}) by class; else {@code INTERNAL}.
     * Each database maps its own codes first.
     */
    static ErrorCode standard(SQLException e, String state) {
        if (e instanceof SQLTimeoutException) {
            return ErrorCode.TIMEOUT;
        }
        if (e instanceof SQLTransientConnectionException || state.startsWith("08")) {
            return ErrorCode.UNAVAILABLE;
        }
        if (state.startsWith("28")) {
            return ErrorCode.AUTH;
        }
        if (state.startsWith("22") || state.startsWith("42")) {
            return ErrorCode.INVALID_ARGUMENT;
        }
        return ErrorCode.INTERNAL;
    }

    /** A database's mapping of its own error during {@code operation} on {@code key}. */
    public interface Mapping {
        FenceGuardException map(SQLException e, String key, String operation);
    }

    /**
     * {@code e}, any exception a call ended with (jOOQ's {@code DataAccessException}, a framework's
     * translation of it, or the driver's own), mapped by {@code mapping} from the database error in its
     * cause chain; a {@link FenceGuardException} is returned as it is; anything else holding no
     * {@link SQLException} becomes {@link ErrorCode#INTERNAL} with a redacted cause chain (jOOQ quotes the
     * SQL and the server's message in its own).
     */
    public static FenceGuardException map(Throwable e, String key, String operation, Mapping mapping) {
        if (e instanceof FenceGuardException own) {
            return own;
        }
        return of(e).map(sql -> mapping.map(sql, key, operation)).orElseGet(() -> new FenceGuardException(ErrorCode.INTERNAL,
                key, operation + " failed: " + e.getClass().getName(), Redacted.chain(e, 0)));
    }

    /**
     * A copy of {@code e} to carry as a cause: its class name and {@code facts} for a message, its SQLSTATE,
     * vendor code and stack trace, and its causes redacted; never the server's words.
     */
    public static SQLException redacted(SQLException e, String facts) {
        SQLException copy = new SQLException(e.getClass().getName() + ": " + facts, e.getSQLState(), e.getErrorCode());
        copy.setStackTrace(e.getStackTrace());
        copy.initCause(Redacted.chain(e.getCause(), 0));
        return copy;
    }
}
