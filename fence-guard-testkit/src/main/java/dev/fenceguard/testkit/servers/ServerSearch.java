package dev.fenceguard.testkit.servers;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The one order in which every kind of test server is found: the environment variable, then
 * Testcontainers when a Docker engine answers, then a server on this machine. Each way that fails adds
 * its reason, and when all fail the {@link ServerUnavailableException} lists them, so a missing server
 * says what was tried instead of skipping.
 */
final class ServerSearch {

    private ServerSearch() {}

    /**
     * @param what the server's name in messages, e.g. {@code "PostgreSQL"}
     * @param envVar the environment variable read first
     * @param example an example value of {@code envVar} for the message
     * @param fromEnv the server at the variable's (trimmed) value; throws with the reason it is not usable
     * @param container starts a container; called only when a Docker engine answers. Give a lambda
     *     that calls a nested class, so Testcontainers is loaded only then
     * @param localName the third way's name in messages
     * @param local the server on this machine; throws with the reason there is none
     */
    static <T> T find(String what, String envVar, String example, Function<String, T> fromEnv,
            Supplier<T> container, String localName, Supplier<T> local) {
        List<String> attempts = new ArrayList<>();
        String value = System.getenv(envVar);
        if (value != null && !value.isBlank()) {
            try {
                return fromEnv.apply(value.trim());
            } catch (RuntimeException e) {
                attempts.add(envVar + "=" + value + ": " + e.getMessage());
            }
        } else {
            attempts.add(envVar + " is not set");
        }
        String docker = Docker.unavailableReason();
        if (docker == null) {
            try {
                return container.get();
            } catch (RuntimeException | LinkageError e) {
                attempts.add("Testcontainers: " + e);
            }
        } else {
            attempts.add("Testcontainers: " + docker);
        }
        try {
            return local.get();
        } catch (RuntimeException | LinkageError e) {
            attempts.add(localName + ": " + e);
        }
        throw new ServerUnavailableException(what, envVar, example, attempts);
    }
}
