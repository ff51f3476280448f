package dev.fenceguard.core.internal;

/** Whether micrometer-core is there to be used: the one check behind every meter sink's {@code automatic()}. */
public final class Micrometer {

    private Micrometer() {}

    /** True if micrometer-core can be loaded from fence-guard-core's class loader (or module graph). */
    public static boolean present() {
        try {
            Class.forName("io.micrometer.core.instrument.Metrics", false, Micrometer.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
