package dev.fenceguard.examples;

import java.util.logging.Level;
import java.util.logging.Logger;

/** Keeps the examples' output to the story: no library banners or INFO logs. */
final class Quiet {
    // Held so the configured loggers are not garbage-collected with their levels.
    private static final Logger FLYWAY = Logger.getLogger("org.flywaydb");

    private Quiet() {}

    static void apply() {
        System.setProperty("org.jooq.no-logo", "true");
        System.setProperty("org.jooq.no-tips", "true");
        FLYWAY.setLevel(Level.SEVERE);
    }
}
