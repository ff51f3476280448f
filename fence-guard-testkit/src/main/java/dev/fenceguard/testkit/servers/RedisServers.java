package dev.fenceguard.testkit.servers;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts private {@code redis-server} processes on free 127.0.0.1 ports, without persistence, for
 * tests that restart, flush or fail over a server. Each is stopped by its handle (and at JVM exit), and
 * its temporary directory and log are deleted then (a log whose path a failure message showed is kept).
 *
 * @since 0.1
 */
public final class RedisServers {

    private RedisServers() {}

    /** Starts a standalone server with no persistence. */
    public static Server start(String... extraArgs) {
        int port = Ports.free();
        Path dir;
        try {
            dir = Files.createTempDirectory("fence-guard-redis-" + port + "-");
        } catch (IOException e) {
            throw new IllegalStateException("no temp dir for redis-server", e);
        }
        List<String> cmd = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port),
                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString(),
                "--protected-mode", "no"));
        cmd.addAll(List.of(extraArgs));
        ManagedProcess process;
        try {
            process = ManagedProcess.start("redis-" + port, cmd, dir);
        } catch (RuntimeException e) {
            throw new IllegalStateException("could not run redis-server (is it on the PATH?): " + e.getMessage(), e);
        }
        ManagedProcess.awaitOrFail(process, port, Duration.ofSeconds(20), "redis-server");
        return new Server(port, dir, process);
    }

    /**
     * Starts a Sentinel on a free port monitoring the master at 127.0.0.1:{@code masterPort} under the
     * name {@code masterName} (quorum 1). Stop it with {@link Server#close()}.
     */
    public static Server sentinel(int masterPort, String masterName) {
        int port = Ports.free();
        Path dir = null;
        try {
            dir = Files.createTempDirectory("fence-guard-sentinel-" + port + "-");
            Path conf = dir.resolve("sentinel.conf");
            Files.writeString(conf, "port " + port + "\nbind 127.0.0.1\nprotected-mode no\ndir " + dir + "\n"
                    + "sentinel monitor " + masterName + " 127.0.0.1 " + masterPort + " 1\n"
                    + "sentinel down-after-milliseconds " + masterName + " 2000\n");
            ManagedProcess process = ManagedProcess.start("sentinel-" + port, List.of("redis-server", conf.toString(), "--sentinel"),
                    dir);
            ManagedProcess.awaitOrFail(process, port, Duration.ofSeconds(20), "redis-server --sentinel");
            return new Server(port, dir, process);
        } catch (IOException e) {
            ManagedProcess.deleteRecursively(dir);
            throw new IllegalStateException("could not start a Sentinel: " + e.getMessage(), e);
        }
    }

    /** One private server. */
    public record Server(int port, Path dir, ManagedProcess process) implements AutoCloseable {

        /** {@code redis://127.0.0.1:<port>}. */
        public URI uri() {
            return URI.create("redis://127.0.0.1:" + port);
        }

        /** Stops and starts the server again on the same port: without persistence it comes back empty. */
        public void restart() {
            process.restart();
            ManagedProcess.awaitOrFail(process, port, Duration.ofSeconds(20), "redis-server (restarted)");
        }

        /** Stops the server and deletes its directory and log. */
        @Override
        public void close() {
            process.close();
        }
    }
}
