package dev.fenceguard.testkit.servers;

import java.util.Locale;
import java.util.UUID;

/**
 * What the SQL test servers ({@link TestPostgres}, {@link TestMariaDb}) share about the schemas and
 * databases they hand to test classes: one naming rule, and one way to show a URL without its password.
 */
final class ScratchNames {

    private ScratchNames() {}

    /**
     * A fresh name {@code fg_<prefix>_<random>}, lower case and safe as an unquoted identifier.
     *
     * @param what "schema" or "database", for the message
     * @throws IllegalArgumentException if {@code prefix} is not 1-20 of {@code [a-z0-9_]}
     */
    static String fresh(String what, String prefix) {
        if (!prefix.matches("[a-z0-9_]{1,20}")) {
            throw new IllegalArgumentException(what + " prefix must be 1-20 of [a-z0-9_], was '" + prefix + "'");
        }
        return "fg_" + prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12).toLowerCase(Locale.ROOT);
    }

    /** {@code jdbcUrl} with the value of its {@code password} parameter hidden. */
    static String redacted(String jdbcUrl) {
        return jdbcUrl.replaceAll("password=[^&]*", "password=***");
    }
}
