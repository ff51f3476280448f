package dev.fenceguard.jdbc.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.Optional;
import java.util.function.Function;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * Maps PostgreSQL errors (by SQLSTATE) to fence-guard's {@link ErrorCode}s, for the lock backend and
 * the fenced writes alike, without the server's words: pgjdbc's message includes the server's DETAIL,
 * which for a constraint violation is the whole row (lock id included), and any primary message can
 * be a trigger's RAISE, with whatever SQLSTATE the trigger chose and whatever row data it quoted. What
 * is kept: SQLSTATE, constraint, schema, table, column and data type names (the server reports them as
 * fields of their own), the operation, and the driver exception's class and stack trace. The only text
 * kept is pgjdbc's own for a connection failure (class 08 without a server message), which names the
 * host it could not reach and cannot come from the server.
 */
public final class PgErrors {

    private static final SqlCauses.Vendor VENDOR = new SqlCauses.Vendor(PgErrors::code, PgErrors::facts,
            e -> "42P01".equals(e.getSQLState()));

    private PgErrors() {}

    /** The code for {@code e}, by the first SQLSTATE in its cause chain. */
    public static ErrorCode code(SQLException e) {
        if (e instanceof SQLTimeoutException || e instanceof SQLTransientConnectionException) {
            return SqlCauses.standard(e, "");
        }
        String state = SqlCauses.of(e).map(SQLException::getSQLState).orElse("");
        return switch (state) {
            case "57014", "55P03" -> ErrorCode.TIMEOUT;                 // query_canceled (statement_timeout), lock_not_available
            case "42501" -> ErrorCode.AUTH;                            // insufficient_privilege
            case "40001", "40P01", "57P01", "57P02", "57P03" -> ErrorCode.UNAVAILABLE; // serialization, deadlock, shutdown
            // insufficient resources; else by the standard classes (08 connection, 28 authorization, 22/42 argument)
            default -> state.startsWith("53") ? ErrorCode.UNAVAILABLE : SqlCauses.standard(e, state);
        };
    }

    /**
     * A {@link FenceGuardException} for {@code e} during {@code operation} on {@code key}. Its message
     * and its cause (a {@link SQLException} copy of {@code e} with the same SQLSTATE, class name in the
     * message, and stack trace) carry no row contents; see the class comment.
     */
    public static FenceGuardException map(SQLException e, String key, String operation) {
        return VENDOR.map(e, key, operation, SqlCauses.TABLE_HINT);
    }

    /**
     * {@link #map(Throwable, String, String)}, naming {@code tables} in the hint of an undefined-table error:
     * for a caller that uses more than the table its operation names (a lock table and its floor table).
     */
    public static BoundedJdbc.Errors naming(String tables) {
        return VENDOR.naming(tables);
    }

    /**
     * {@link #map(SQLException, String, String)} for any exception a call ended with: jOOQ's
     * {@code DataAccessException}, a framework's translation of it, or the driver's own. It is mapped by
     * the SQLSTATE found in its cause chain; a {@link FenceGuardException} is returned as it is; anything
     * else holding no {@link SQLException} becomes {@link ErrorCode#INTERNAL} with a redacted cause chain
     * (jOOQ quotes the SQL and the server's message in its own).
     */
    public static FenceGuardException map(Throwable e, String key, String operation) {
        return SqlCauses.map(e, key, operation, PgErrors::map);
    }

    /** The column the server named in {@code e} (e.g. a {@code NOT NULL} violation), if any. */
    public static Optional<String> column(SQLException e) {
        return SqlCauses.of(e).filter(PgErrors::fromPgjdbc).flatMap(p -> Pgjdbc.named(p, ServerErrorMessage::getColumn));
    }

    /** The constraint the server named in {@code e}, if any. */
    public static Optional<String> constraint(SQLException e) {
        return SqlCauses.of(e).filter(PgErrors::fromPgjdbc).flatMap(p -> Pgjdbc.named(p, ServerErrorMessage::getConstraint));
    }

    /**
     * Whether {@code e} is pgjdbc's: pgjdbc is the application's choice of driver, so it may be absent, and
     * its classes are touched (in {@link Pgjdbc}) only for an exception that pgjdbc itself threw.
     */
    private static boolean fromPgjdbc(SQLException e) {
        for (Class<?> c = e.getClass(); c != null; c = c.getSuperclass()) {
            if (c.getName().equals("org.postgresql.util.PSQLException")) {
                return true;
            }
        }
        return false;
    }

    /** What only pgjdbc's exception carries; loaded only when pgjdbc threw. */
    private static final class Pgjdbc {
        static Optional<String> named(SQLException e, Function<ServerErrorMessage, String> name) {
            return Optional.ofNullable(((PSQLException) e).getServerErrorMessage()).map(name);
        }

        /** Appends the names the server reported; false if there was no server message. */
        static boolean names(StringBuilder out, SQLException e) {
            ServerErrorMessage server = ((PSQLException) e).getServerErrorMessage();
            if (server == null) {
                return false;
            }
            name(out, "constraint", server.getConstraint());
            String table = server.getTable();
            if (table != null) {
                name(out, "table", server.getSchema() == null ? table : server.getSchema() + "." + table);
            }
            name(out, "column", server.getColumn());
            name(out, "type", server.getDatatype());
            return true;
        }
    }

    /** SQLSTATE, the names the server reported, and pgjdbc's own text of a connection failure. */
    static String facts(SQLException e) {
        String state = e.getSQLState();
        StringBuilder out = new StringBuilder("SQLSTATE ").append(state);
        boolean pgjdbc = fromPgjdbc(e);
        boolean fromServer = pgjdbc && Pgjdbc.names(out, e);
        if (!fromServer && pgjdbc && state != null && state.startsWith("08")
                && e.getMessage() != null && !e.getMessage().isBlank()) {
            // pgjdbc's own words ("Connection to 127.0.0.1:1 refused"): no server was there to say anything.
            out.append(": ").append(firstLine(e.getMessage()));
        } else {
            // Whatever the class: a trigger can RAISE any SQLSTATE, with row data in its message.
            out.append(" (server message withheld: it may quote row contents)");
        }
        return out.toString();
    }

    private static void name(StringBuilder out, String what, String value) {
        if (value != null && !value.isEmpty()) {
            out.append(", ").append(what).append(" \"").append(value).append('"');
        }
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
