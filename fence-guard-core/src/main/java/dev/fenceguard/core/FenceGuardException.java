package dev.fenceguard.core;

import java.util.Objects;
import java.util.Optional;

/**
 * The one exception type fence-guard throws for backend and protocol failures. Each carries an
 * {@link ErrorCode} mapped from the driver's own error, and, when there is one, the lock key or
 * resource it concerns. It never carries a lock id.
 *
 * <p>fence-guard's backends never put a driver's own message into one, since drivers quote data (a
 * PostgreSQL constraint violation quotes the whole row, lock id included): the message keeps the
 * SQLSTATE, Redis error or gRPC status, and the names of the objects involved, and the cause is a copy
 * of the driver's exception with its class name in the message and its stack trace, but not its
 * message (for PostgreSQL an {@code java.sql.SQLException} with the same SQLSTATE).
 *
 * <p>Invalid arguments detected before any I/O are reported as {@link IllegalArgumentException}
 * instead, like the rest of the Java platform.
 *
 * @since 0.1
 */
public class FenceGuardException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final ErrorCode code;
    private final String key;

    /**
     * @param code what went wrong
     * @param key the lock key or resource concerned, or null when there is none
     * @param message a message for humans; the code and key are prepended
     * @param cause the driver's exception, or null
     */
    public FenceGuardException(ErrorCode code, String key, String message, Throwable cause) {
        super(format(code, key, message), cause);
        this.code = Objects.requireNonNull(code, "code");
        this.key = key;
    }

    /** Same as {@link #FenceGuardException(ErrorCode, String, String, Throwable)} without a cause. */
    public FenceGuardException(ErrorCode code, String key, String message) {
        this(code, key, message, null);
    }

    /** What went wrong. */
    public ErrorCode code() {
        return code;
    }

    /** The lock key or resource concerned, when known. */
    public Optional<String> key() {
        return Optional.ofNullable(key);
    }

    private static String format(ErrorCode code, String key, String message) {
        return key == null ? code + ": " + message : code + " (key '" + key + "'): " + message;
    }
}
