package dev.fenceguard.jpa.internal;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.internal.Redacted;
import jakarta.persistence.LockTimeoutException;
import jakarta.persistence.PessimisticLockException;
import jakarta.persistence.QueryTimeoutException;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.Optional;
import org.hibernate.exception.ConstraintViolationException;

/**
 * Maps what a JPA provider throws during a fenced write to a {@link FenceGuardException}, by the
 * SQLSTATE of the database's error wherever it is in the cause chain (Hibernate wraps the driver's
 * {@link SQLException}; Spring may wrap Hibernate's exception again). The classes of SQLSTATE are the
 * standard's, so this holds for any database. Messages keep the SQLSTATE, the constraint name and the
 * operation, never the provider's or the server's text: Hibernate quotes the SQL and the server's
 * message, and PostgreSQL's DETAIL quotes the whole row.
 */
public final class JpaErrors {

    private static final int MAX_DEPTH = 16;

    private JpaErrors() {}

    /**
     * {@code e} as a {@link FenceGuardException} for {@code operation} on {@code resource}; one of
     * fence-guard's own is returned as it is.
     */
    public static FenceGuardException map(Throwable e, String resource, String operation) {
        if (e instanceof FenceGuardException own) {
            return own;
        }
        Optional<SQLException> sql = sqlCause(e);
        String state = sql.map(SQLException::getSQLState).orElse(null);
        StringBuilder facts = new StringBuilder(operation).append(" failed: ");
        facts.append(state != null ? "SQLSTATE " + state : e.getClass().getName());
        constraint(e).ifPresent(c -> facts.append(", constraint \"").append(c).append('"'));
        if (state != null) {
            facts.append(" (server message withheld: it may quote row contents)");
        }
        return new FenceGuardException(code(e, sql, state), resource, facts.toString(), Redacted.chain(e, 0));
    }

    static ErrorCode code(Throwable e, Optional<SQLException> sql, String state) {
        if (has(e, QueryTimeoutException.class) || has(e, LockTimeoutException.class)
                || sql.filter(SQLTimeoutException.class::isInstance).isPresent()) {
            return ErrorCode.TIMEOUT;
        }
        if (has(e, PessimisticLockException.class) || sql.filter(SQLTransientConnectionException.class::isInstance).isPresent()) {
            return ErrorCode.UNAVAILABLE;
        }
        if (state == null || state.length() != 5) {
            return ErrorCode.INTERNAL;
        }
        if (state.equals("57014") || state.equals("55P03")) { // statement canceled by a timeout, lock not available
            return ErrorCode.TIMEOUT;
        }
        if (state.equals("42501")) { // insufficient privilege
            return ErrorCode.AUTH;
        }
        return switch (state.substring(0, 2)) {
            case "08", "40", "53", "57" -> ErrorCode.UNAVAILABLE; // connection, rollback (serialization, deadlock), resources, shutdown
            case "28" -> ErrorCode.AUTH;
            case "22", "23", "42" -> ErrorCode.INVALID_ARGUMENT; // data, integrity constraint, syntax or undefined object
            default -> ErrorCode.INTERNAL;
        };
    }

    /** The first {@link SQLException} in the chain that has a SQLSTATE, else the first one. */
    private static Optional<SQLException> sqlCause(Throwable e) {
        SQLException first = null;
        Throwable c = e;
        for (int depth = 0; c != null && depth < MAX_DEPTH; depth++, c = c.getCause()) {
            if (c instanceof SQLException s) {
                if (s.getSQLState() != null) {
                    return Optional.of(s);
                }
                first = first == null ? s : first;
            }
        }
        return Optional.ofNullable(first);
    }

    private static Optional<String> constraint(Throwable e) {
        Throwable c = e;
        for (int depth = 0; c != null && depth < MAX_DEPTH; depth++, c = c.getCause()) {
            if (c instanceof ConstraintViolationException v && v.getConstraintName() != null) {
                return Optional.of(v.getConstraintName());
            }
        }
        return Optional.empty();
    }

    private static boolean has(Throwable e, Class<? extends Throwable> type) {
        Throwable c = e;
        for (int depth = 0; c != null && depth < MAX_DEPTH; depth++, c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }
}
