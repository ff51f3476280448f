package dev.fenceguard.core.internal;

import java.util.regex.Pattern;

/**
 * Validation of SQL identifiers (schema, table, column names) that fence-guard puts into SQL. Only
 * plain ASCII names are accepted: a letter or underscore, then letters, digits or underscores, at most
 * 63 characters (PostgreSQL's limit). Everything else, quotes, semicolons, {@code --}, white space,
 * NUL, non-ASCII, is refused before any SQL is built, so a name can never change the statement. Names
 * are always quoted when rendered, so they are case-sensitive.
 */
public final class SqlIdentifiers {

    /** PostgreSQL's NAMEDATALEN - 1. */
    public static final int MAX_LENGTH = 63;

    private static final Pattern PLAIN = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private SqlIdentifiers() {}

    /**
     * Returns {@code name} if it is a plain identifier.
     *
     * @param what what the name is for, used in the message ("table", "key column", ...)
     * @throws IllegalArgumentException naming {@code what}, the rule and the (shortened) value
     */
    public static String require(String what, String name) {
        if (name == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (name.isEmpty()) {
            throw new IllegalArgumentException(what + " must not be empty");
        }
        if (name.length() > MAX_LENGTH) {
            throw new IllegalArgumentException(what + " must be at most " + MAX_LENGTH + " characters, was "
                    + name.length() + ": " + preview(name));
        }
        if (!PLAIN.matcher(name).matches()) {
            throw new IllegalArgumentException(what + " must be a plain SQL identifier (an ASCII letter or '_', then"
                    + " letters, digits or '_'), was " + preview(name));
        }
        return name;
    }

    private static String preview(String s) {
        StringBuilder out = new StringBuilder("'");
        int limit = Math.min(s.length(), 40);
        for (int i = 0; i < limit; i++) {
            char c = s.charAt(i);
            out.append(c < 0x20 || c > 0x7e ? String.format("\\u%04X", (int) c) : String.valueOf(c));
        }
        if (s.length() > limit) {
            out.append("...(").append(s.length()).append(" chars)");
        }
        return out.append('\'').toString();
    }
}
