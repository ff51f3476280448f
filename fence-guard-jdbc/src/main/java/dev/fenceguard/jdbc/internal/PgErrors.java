package dev.fenceguard.jdbc.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;

/** Maps PostgreSQL errors (by SQLSTATE) to fence-guard's {@link ErrorCode}s. */
public final class PgErrors {

    private PgErrors() {}

    /** The code for {@code e}. */
    public static ErrorCode code(SQLException e) {
        if (e instanceof SQLTimeoutException) {
            return ErrorCode.TIMEOUT;
        }
        if (e instanceof SQLTransientConnectionException) {
            return ErrorCode.UNAVAILABLE;
        }
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        return switch (state) {
            case "57014", "55P03" -> ErrorCode.TIMEOUT;                 // query_canceled (statement_timeout), lock_not_available
            case "42501" -> ErrorCode.AUTH;                            // insufficient_privilege
            case "40001", "40P01", "57P01", "57P02", "57P03" -> ErrorCode.UNAVAILABLE; // serialization, deadlock, shutdown
            default -> {
                if (state.startsWith("08") || state.startsWith("53")) {   // connection exception, insufficient resources
                    yield ErrorCode.UNAVAILABLE;
                }
                if (state.startsWith("28")) {                             // invalid authorization
                    yield ErrorCode.AUTH;
                }
                if (state.startsWith("22") || state.startsWith("42")) {   // data exception, syntax/undefined object
                    yield ErrorCode.INVALID_ARGUMENT;
                }
                yield ErrorCode.INTERNAL;
            }
        };
    }

    /** A {@link FenceGuardException} for {@code e} during {@code operation} on {@code key}. */
    public static FenceGuardException map(SQLException e, String key, String operation) {
        String hint = "42P01".equals(e.getSQLState())
                ? " (does the table exist? create it with FenceGuardMigrations or your own Flyway)" : "";
        return new FenceGuardException(code(e), key, operation + " failed: SQLSTATE " + e.getSQLState() + ": "
                + e.getMessage() + hint, e);
    }
}
