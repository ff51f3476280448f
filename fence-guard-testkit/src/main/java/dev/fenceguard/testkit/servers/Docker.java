package dev.fenceguard.testkit.servers;

/** Whether Testcontainers is on the class path and a Docker engine answers. */
final class Docker {

    private Docker() {}

    static String unavailableReason() {
        try {
            Class.forName("org.testcontainers.DockerClientFactory", false, Docker.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return "Testcontainers is not on the test class path";
        }
        try {
            return org.testcontainers.DockerClientFactory.instance().isDockerAvailable() ? null : "no Docker engine answers";
        } catch (RuntimeException | LinkageError e) {
            return "Testcontainers could not reach Docker: " + e;
        }
    }
}
