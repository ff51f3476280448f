package dev.fenceguard.testkit;

import java.io.PrintWriter;
import java.io.StringWriter;

/**
 * What an exception shows wherever it ends up: for tests that a secret (a lock id, a row's data, a
 * server's message) appears in no exception a user may log or print.
 *
 * @since 0.1
 */
public final class Printed {

    private Printed() {}

    /**
     * The message of {@code t} and of each of its causes, one a line, then its printed stack trace (which
     * the JDK prints with every cause's {@code toString()} and suppressed exceptions): everything a log
     * line or an uncaught-exception handler can show of {@code t}.
     */
    public static String everything(Throwable t) {
        StringBuilder out = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            out.append(c.getMessage()).append('\n');
        }
        StringWriter trace = new StringWriter();
        t.printStackTrace(new PrintWriter(trace));
        return out.append(trace).toString();
    }
}
