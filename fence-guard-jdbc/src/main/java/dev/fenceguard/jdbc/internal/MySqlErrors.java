package dev.fenceguard.jdbc.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Maps MySQL and MariaDB errors (by vendor error code, then SQLSTATE) to fence-guard's
 * {@link ErrorCode}s, for the lock backend and the fenced writes alike, without the server's words.
 * MySQL's messages quote values freely ({@code Duplicate entry 'x' for key}, {@code Incorrect integer
 * value: 'x'}, a syntax error quoting the SQL near it, which with the drivers' default client-side
 * prepared statements holds the bound values), and a trigger's {@code SIGNAL} sets any SQLSTATE, vendor
 * code and message text it likes; so only the SQLSTATE and the vendor code are kept. A column is named
 * only for the two vendor codes whose messages name one ({@code 1048 Column 'c' cannot be null},
 * {@code 1364 Field 'c' doesn't have a default value}), read from the known form, at most 64 characters.
 */
public final class MySqlErrors {

    private static final Pattern COLUMN = Pattern.compile("\\b(?:Column|Field) '([^']{1,64})' (?:cannot be null|doesn't have a default value)");

    private static final SqlCauses.Vendor VENDOR = new SqlCauses.Vendor(MySqlErrors::code, MySqlErrors::facts,
            e -> e.getErrorCode() == 1146);

    private MySqlErrors() {}

    /** The code for {@code e}, by the first vendor code or SQLSTATE in its cause chain. */
    public static ErrorCode code(SQLException e) {
        if (e instanceof SQLTimeoutException || e instanceof SQLTransientConnectionException) {
            return SqlCauses.standard(e, "");
        }
        SQLException source = SqlCauses.of(e).orElse(e);
        String state = source.getSQLState() == null ? "" : source.getSQLState();
        return switch (source.getErrorCode()) {
            // lock wait timeout; query interrupted; MariaDB max_statement_time; MySQL max_execution_time
            case 1205, 1317, 1969, 3024 -> ErrorCode.TIMEOUT;
            case 1213, 1040, 1053, 2002, 2003, 2006, 2013 -> ErrorCode.UNAVAILABLE; // deadlock, too many connections, shutdown, gone
            case 1044, 1045, 1142, 1143, 1227 -> ErrorCode.AUTH;
            case 1146, 1049 -> ErrorCode.INVALID_ARGUMENT;                        // no such table or database
            // serialization failure, query cancelled; else by the standard classes (08, 28, 22/42)
            default -> state.equals("40001") ? ErrorCode.UNAVAILABLE : state.equals("70100") ? ErrorCode.TIMEOUT
                    : SqlCauses.standard(e, state);
        };
    }

    /**
     * A {@link FenceGuardException} for {@code e} during {@code operation} on {@code key}; its message and
     * its cause (a {@link SQLException} copy with the same SQLSTATE and vendor code) carry no row contents.
     */
    public static FenceGuardException map(SQLException e, String key, String operation) {
        return VENDOR.map(e, key, operation, SqlCauses.TABLE_HINT);
    }

    /** As {@link PgErrors#naming(String)}. */
    public static BoundedJdbc.Errors naming(String tables) {
        return VENDOR.naming(tables);
    }

    /** {@link #map(SQLException, String, String)} for any exception, as {@link PgErrors#map(Throwable, String, String)}. */
    public static FenceGuardException map(Throwable e, String key, String operation) {
        return SqlCauses.map(e, key, operation, MySqlErrors::map);
    }

    /** The column a {@code NOT NULL} refusal (vendor code 1048 or 1364) named, read from the message's known form. */
    public static Optional<String> column(SQLException e) {
        SQLException source = SqlCauses.of(e).orElse(e);
        String message = source.getMessage();
        if (message == null || source.getErrorCode() != 1048 && source.getErrorCode() != 1364) {
            return Optional.empty();
        }
        // Drivers prefix the server's text ("(conn=12) Column 'x' ..."): look for the form in the first line.
        Matcher m = COLUMN.matcher(message.lines().findFirst().orElse(""));
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /** Whether {@code e} is the server refusing a row it was asked to insert (a constraint or a missing value). */
    public static boolean rowRefused(SQLException e) {
        SQLException source = SqlCauses.of(e).orElse(e);
        String state = source.getSQLState() == null ? "" : source.getSQLState();
        // 1364: no default for a NOT NULL column (SQLSTATE HY000); 3819 / 4025: check constraint (MySQL / MariaDB)
        return state.startsWith("23") || source.getErrorCode() == 1364 || source.getErrorCode() == 3819 || source.getErrorCode() == 4025;
    }

    /** Vendor code, SQLSTATE and the column a {@code NOT NULL} refusal named; never the message. */
    static String facts(SQLException e) {
        StringBuilder out = new StringBuilder("SQLSTATE ").append(e.getSQLState()).append(", error ").append(e.getErrorCode());
        column(e).ifPresent(c -> out.append(", column \"").append(c).append('"'));
        return out.append(" (server message withheld: it may quote row contents)").toString();
    }
}
