package dev.fenceguard.testkit.servers;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A server process the harness started; output goes to a log file in the temp directory. The process
 * is stopped, and its log and working directory deleted, when {@link #close()} is called or the JVM
 * exits; a log whose path was handed out by {@link #logFile()} (for a failure message) is kept.
 *
 * @since 0.1
 */
public final class ManagedProcess implements AutoCloseable {

    private final List<String> command;
    private final Path log;
    private final Path workDir;
    private final Thread exitHook;
    private volatile Process process;
    private volatile boolean keepLog;

    private ManagedProcess(String name, List<String> command, Path log, Path workDir) {
        this.command = List.copyOf(command);
        this.log = log;
        this.workDir = workDir;
        this.exitHook = new Thread(this::cleanUp, "stop-" + name);
    }

    /** Starts {@code command}, appending its output to a temporary log file named after {@code name}. */
    public static ManagedProcess start(String name, List<String> command) {
        return start(name, command, null);
    }

    /**
     * Starts {@code command} like {@link #start(String, List)}; {@code workDir} (the server's data
     * directory, or null) belongs to the process from now on and is deleted with it.
     */
    public static ManagedProcess start(String name, List<String> command, Path workDir) {
        Path log = null;
        try {
            log = Files.createTempFile("fence-guard-" + name + "-", ".log");
            ManagedProcess managed = new ManagedProcess(name, command, log, workDir);
            Runtime.getRuntime().addShutdownHook(managed.exitHook);
            managed.launch();
            return managed;
        } catch (IOException e) {
            deleteRecursively(log);
            deleteRecursively(workDir);
            throw new UncheckedIOException("could not start " + command, e);
        }
    }

    private void launch() throws IOException {
        process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    }

    /** Whether the process is running. */
    public boolean isAlive() {
        Process p = process;
        return p != null && p.isAlive();
    }

    /** Stops the process (SIGTERM, then SIGKILL after 10 s). Idempotent. */
    public void stop() {
        Process p = process;
        if (p == null) {
            return;
        }
        p.destroy();
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Kills the process at once (SIGKILL), as a crash would. */
    public void kill() {
        Process p = process;
        if (p != null) {
            p.destroyForcibly();
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Stops the process if running and starts the same command again. */
    public void restart() {
        stop();
        try {
            launch();
        } catch (IOException e) {
            throw new UncheckedIOException("could not restart " + command, e);
        }
    }

    /** The end of the log file, for error messages. */
    public String logTail() {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /**
     * Where the output goes. Asking for it keeps the log after {@link #close()}: its path is about to be
     * shown to someone.
     */
    public File logFile() {
        keepLog = true;
        return log.toFile();
    }

    /** Stops the process and deletes its working directory and, unless its path was handed out, its log. Idempotent. */
    @Override
    public void close() {
        removeExitHook(exitHook);
        cleanUp();
    }

    /**
     * Unregisters the shutdown hook of a server closed by hand (this process, a PostgreSQL of
     * {@link PostgresServers}). Quietly does nothing while the JVM is exiting (the hook is running or ran,
     * and cleans up itself) or if the hook was never registered.
     */
    static void removeExitHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException | IllegalArgumentException e) {
            // exiting, or never registered
        }
    }

    private void cleanUp() {
        stop();
        deleteRecursively(workDir);
        if (!keepLog) {
            deleteRecursively(log);
        }
    }

    /** Deletes {@code path} and everything under it, as far as possible; null is ignored. */
    static void deleteRecursively(Path path) {
        if (path == null || !Files.exists(path)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(path)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // best effort: a file still open by a dying process
                }
            });
        } catch (IOException | UncheckedIOException ignored) {
            // best effort
        }
    }

    static void awaitOrFail(ManagedProcess p, int port, Duration timeout, String what) {
        if (!Ports.awaitListening(port, timeout)) {
            File logFile = p.logFile(); // shown below, so kept
            String tail = p.logTail();
            p.close();
            throw new IllegalStateException(what + " did not listen on 127.0.0.1:" + port + " within " + timeout
                    + "; log " + logFile + ":\n" + tail);
        }
    }
}
