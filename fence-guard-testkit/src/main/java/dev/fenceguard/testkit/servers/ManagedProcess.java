package dev.fenceguard.testkit.servers;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A server process the harness started; output goes to a log file, and the process is stopped when
 * {@link #stop()} is called or the JVM exits.
 */
public final class ManagedProcess implements AutoCloseable {

    private final List<String> command;
    private final Path log;
    private volatile Process process;

    private ManagedProcess(List<String> command, Path log) {
        this.command = List.copyOf(command);
        this.log = log;
    }

    /** Starts {@code command}, appending its output to a temporary log file named after {@code name}. */
    public static ManagedProcess start(String name, List<String> command) {
        try {
            Path log = Files.createTempFile("fence-guard-" + name + "-", ".log");
            ManagedProcess managed = new ManagedProcess(command, log);
            managed.launch();
            Runtime.getRuntime().addShutdownHook(new Thread(managed::stop, "stop-" + name));
            return managed;
        } catch (IOException e) {
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

    /** Where the output goes. */
    public File logFile() {
        return log.toFile();
    }

    @Override
    public void close() {
        stop();
    }

    static void awaitOrFail(ManagedProcess p, int port, Duration timeout, String what) {
        if (!Ports.awaitListening(port, timeout)) {
            String tail = p.logTail();
            p.stop();
            throw new IllegalStateException(what + " did not listen on 127.0.0.1:" + port + " within " + timeout
                    + "; log " + p.logFile() + ":\n" + tail);
        }
    }
}
