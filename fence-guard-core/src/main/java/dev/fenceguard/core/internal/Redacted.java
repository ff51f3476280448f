package dev.fenceguard.core.internal;

import dev.fenceguard.core.FenceGuardException;

/**
 * Stands in for a driver's exception in a cause chain when the driver's message may quote data (a
 * PostgreSQL DETAIL with the whole row, a Redis error that echoes a command's arguments, a gRPC
 * status description). It keeps what a user needs to debug, the original class, the safe facts the
 * caller composes from the original (never its raw message) and the original stack trace, so that
 * neither a log line nor a printed stack trace can carry a lock id or stored values.
 */
public final class Redacted extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String originalClass;

    private Redacted(Throwable original, String facts) {
        super(original.getClass().getName() + (facts == null || facts.isEmpty()
                ? " (message withheld: it may quote stored data)" : ": " + facts));
        this.originalClass = original.getClass().getName();
        setStackTrace(original.getStackTrace());
    }

    /**
     * A copy of {@code original} with only {@code facts} as its message, and a copy of its cause chain
     * with class names and stack traces only. Null for null.
     */
    public static Redacted of(Throwable original, String facts) {
        if (original == null) {
            return null;
        }
        Redacted copy = new Redacted(original, facts);
        copy.initCause(chain(original.getCause(), 0));
        return copy;
    }

    /** A copy of {@code t} and its causes, class names and stack traces only; fence-guard's own kept. */
    public static Throwable chain(Throwable t, int depth) {
        if (t == null || depth > 16) {
            return null; // a cycle or an absurd chain: stop rather than loop
        }
        if (t instanceof FenceGuardException || t instanceof Redacted) {
            return t; // composed from safe facts only
        }
        Redacted copy = new Redacted(t, null);
        copy.initCause(chain(t.getCause(), depth + 1));
        return copy;
    }

    /** The class name of the exception this stands in for. */
    public String originalClass() {
        return originalClass;
    }

    /**
     * A one-line description of {@code t} for a log line: a {@link FenceGuardException}'s message (it
     * carries no lock id or row contents by construction), otherwise only the class name, since
     * fence-guard cannot vouch for the message of an exception it did not compose.
     */
    public static String describe(Throwable t) {
        if (t == null) {
            return "null";
        }
        if (t instanceof FenceGuardException || t instanceof Redacted) {
            return t.toString();
        }
        return t.getClass().getName() + " (message withheld: it may quote stored data)";
    }
}
