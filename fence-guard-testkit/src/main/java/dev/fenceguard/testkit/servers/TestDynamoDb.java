package dev.fenceguard.testkit.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A DynamoDB endpoint for tests, found once per JVM in this order:
 * <ol>
 *   <li>{@code FENCE_GUARD_TEST_DYNAMODB_URL}, e.g. {@code http://127.0.0.1:4567} (any DynamoDB API:
 *       DynamoDB Local, LocalStack, dynalite);</li>
 *   <li>Testcontainers, when a Docker engine answers (LocalStack's image, DynamoDB service only);</li>
 *   <li>dynalite {@value #DYNALITE_VERSION} (npm, Apache-2.0) run by the machine's Node.js on a free
 *       127.0.0.1 port, data in memory. On first use it is installed with
 *       {@code npm install --prefix <cache>/dynalite-4.0.0 dynalite@4.0.0} into the cache folder
 *       ({@link #cacheDir()}: {@code $FENCE_GUARD_CACHE}, else {@code ~/.cache/fence-guard}); later runs
 *       reuse it.</li>
 * </ol>
 * If none works, {@link #server()} throws {@link ServerUnavailableException} naming all three.
 *
 * <p>Credentials and region do not matter to these servers; give the SDK any static pair. Tests
 * isolate themselves with {@link #newTableName(String)}: one table per test class, deleted at the end
 * or, on dynalite, gone with the process.
 *
 * <p>What dynalite does not serve: {@code TransactWriteItems}, and the item of a failed condition
 * ({@code ReturnValuesOnConditionCheckFailure=ALL_OLD} answers without it). Code paths that need them
 * are tested elsewhere (docs/dynamodb.md says where).
 *
 * @since 0.1
 */
public final class TestDynamoDb {

    /** The environment variable read first. */
    public static final String ENV = "FENCE_GUARD_TEST_DYNAMODB_URL";

    /** The dynalite version installed from npm. */
    public static final String DYNALITE_VERSION = "4.0.0";

    private static TestDynamoDb instance;

    private final URI endpoint;
    private final String origin;
    private final Object keepAlive;
    private final boolean restartable;

    private TestDynamoDb(URI endpoint, String origin, Object keepAlive) {
        this(endpoint, origin, keepAlive, false);
    }

    private TestDynamoDb(URI endpoint, String origin, Object keepAlive, boolean restartable) {
        this.endpoint = endpoint;
        this.origin = origin;
        this.keepAlive = keepAlive;
        this.restartable = restartable;
    }

    /** The shared endpoint, found or started on first use. */
    public static synchronized TestDynamoDb server() {
        if (instance == null) {
            instance = find();
        }
        return instance;
    }

    /** The endpoint URI, e.g. {@code http://127.0.0.1:45123}, for the SDK's {@code endpointOverride}. */
    public URI endpoint() {
        return endpoint;
    }

    /** Where the server came from: {@code env}, {@code testcontainers} or {@code dynalite}. */
    public String origin() {
        return origin;
    }

    /** A table name no other test run uses: {@code fgtest-<name>-<random>}, at most 255 characters of {@code [a-zA-Z0-9_.-]}. */
    public static String newTableName(String name) {
        String clean = name.replaceAll("[^a-zA-Z0-9_.-]", "-");
        return ("fgtest-" + clean + "-" + UUID.randomUUID().toString().substring(0, 8)).toLowerCase(Locale.ROOT);
    }

    /**
     * Starts a dynalite of its own on a free loopback port (installing it first if needed), data in memory,
     * for fault tests that kill and restart their server: the shared one is never killed. Close it when done.
     * {@link #restart()} brings it back empty: no tables. A table it creates is active at once
     * ({@code --createTableMs 0}), so that a test recreating one after a restart waits for nothing but the
     * restart.
     */
    public static TestDynamoDb startDynalite() {
        return startLocal(true, false);
    }

    /**
     * Starts a dynalite of its own like {@link #startDynalite()}, but with its data in a LevelDB store
     * ({@code --path}) in a temporary folder of its own, so that its tables and items outlive
     * {@link #kill()} and {@link #restart()}: each write is in the store's log before dynalite answers it,
     * and a killed process loses no write the operating system took. The folder is deleted by
     * {@link #close()}.
     *
     * @since 0.1
     */
    public static TestDynamoDb startDynaliteOnDisk() {
        return startLocal(true, true);
    }

    /**
     * Kills a dynalite started by {@link #startDynalite()} or {@link #startDynaliteOnDisk()} at once
     * (SIGKILL, as a crash would): open connections are reset, and nothing listens on its port until
     * {@link #restart()}.
     *
     * @throws IllegalStateException if this class did not start the server
     * @since 0.1
     */
    public void kill() {
        ownProcess("kill").kill();
    }

    /**
     * Starts a dynalite of {@link #startDynalite()} or {@link #startDynaliteOnDisk()} again on the same
     * port (stopping it first if it runs) and waits until it listens: in memory it comes back with no
     * tables, on disk with every write it answered.
     *
     * @throws IllegalStateException if this class did not start the server, or it did not listen again
     *     within 30 s (the message holds the end of its log)
     * @since 0.1
     */
    public void restart() {
        ManagedProcess process = ownProcess("restart");
        process.restart();
        ManagedProcess.awaitOrFail(process, endpoint.getPort(), Duration.ofSeconds(30), "dynalite (restarted)");
    }

    /** The folder dynalite is installed into: {@code $FENCE_GUARD_CACHE/dynalite-<version>}, else under {@code ~/.cache/fence-guard}. */
    public static Path cacheDir() {
        String env = System.getenv("FENCE_GUARD_CACHE");
        Path root = env != null && !env.isBlank() ? Path.of(env)
                : Path.of(System.getProperty("user.home"), ".cache", "fence-guard");
        return root.resolve("dynalite-" + DYNALITE_VERSION);
    }

    /** Stops the server if this class started it (a {@link #startDynalite()} one, typically). */
    public void close() {
        if (keepAlive instanceof ManagedProcess p) {
            p.close();
        }
    }

    @Override
    public String toString() {
        return "TestDynamoDb[" + origin + " " + endpoint + "]";
    }

    /** Any HTTP answer from {@code endpoint}: these servers answer a bare GET with an error document. */
    static boolean answers(URI endpoint, Duration timeout) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        long deadline = System.nanoTime() + timeout.toNanos();
        do {
            try {
                http.send(HttpRequest.newBuilder(endpoint).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.discarding());
                return true;
            } catch (IOException e) {
                // not up yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            Ports.sleep(Duration.ofMillis(50));
        } while (System.nanoTime() < deadline);
        return false;
    }

    private static TestDynamoDb find() {
        return ServerSearch.find("DynamoDB", ENV, "http://127.0.0.1:4567", url -> {
            URI uri = URI.create(url);
            if (uri.getScheme() == null || uri.getHost() == null) {
                throw new IllegalStateException("not an http(s)://host:port URL");
            }
            if (!answers(uri, Duration.ofSeconds(5))) {
                throw new IllegalStateException("no HTTP answer within 5 s");
            }
            return new TestDynamoDb(uri, "env", null);
        }, () -> LocalStackContainer.start(), "dynalite", () -> {
            TestDynamoDb local = startLocal(false, false);
            // say why LocalStack was not used, so that a machine with Docker that fell through shows it
            System.err.println("TestDynamoDb: " + local + "; LocalStack not used: " + Docker.unavailableReason());
            return local;
        });
    }

    private ManagedProcess ownProcess(String what) {
        if (restartable && keepAlive instanceof ManagedProcess p) {
            return p;
        }
        throw new IllegalStateException("cannot " + what + " " + this + ": only a dynalite of startDynalite() or "
                + "startDynaliteOnDisk() can be killed or restarted (the shared server never is)");
    }

    private static TestDynamoDb startLocal(boolean restartable, boolean onDisk) {
        Path cli = install();
        // A server that will be restarted listens below the ephemeral range: while it is down, no client's
        // outgoing connection (nor a loopback connect to itself) can take its port from under the restart.
        int port = restartable ? Ports.refused() : Ports.free();
        List<String> command = new java.util.ArrayList<>(List.of(node(), cli.toString(), "--host", "127.0.0.1", "--port",
                Integer.toString(port)));
        if (restartable) {
            // A table active at once (dynalite's default keeps it CREATING for 500 ms): a fault test that recreates
            // the lock table of a server restarted empty measures the restart, not a timer of the emulator's.
            command.addAll(List.of("--createTableMs", "0"));
        }
        Path data = null;
        if (onDisk) {
            try {
                data = Files.createTempDirectory("fence-guard-dynalite-" + port + "-");
            } catch (IOException e) {
                throw new UncheckedIOException("no temp dir for dynalite's data", e);
            }
            command.addAll(List.of("--path", data.resolve("db").toString()));
        }
        ManagedProcess process = ManagedProcess.start("dynalite-" + port, command, data);
        ManagedProcess.awaitOrFail(process, port, Duration.ofSeconds(30), "dynalite");
        return new TestDynamoDb(URI.create("http://127.0.0.1:" + port), "dynalite", process, restartable);
    }

    private static String node() {
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(java.io.File.pathSeparator)) {
            Path node = Path.of(dir, "node");
            if (Files.isExecutable(node)) {
                return node.toString();
            }
        }
        throw new IllegalStateException("no node on the PATH (dynalite needs Node.js 20 or later)");
    }

    /**
     * dynalite's {@code cli.js} in the cache folder, installed there with npm first if missing. The install
     * goes to a fresh folder beside it and is moved into place whole, under a file lock, so that JVMs
     * starting at once neither install twice nor see half an install.
     */
    static Path install() {
        Path dir = cacheDir();
        Path cli = dir.resolve("node_modules/dynalite/cli.js");
        if (Files.isRegularFile(cli)) {
            return cli;
        }
        try {
            Files.createDirectories(dir.getParent());
            try (FileChannel lockFile = FileChannel.open(dir.getParent().resolve("dynalite.lock"),
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                    FileLock ignored = lockFile.lock()) {
                if (Files.isRegularFile(cli)) {
                    return cli; // another JVM installed it while this one waited
                }
                Path staging = Files.createTempDirectory(dir.getParent(), "dynalite-install-");
                Path log = staging.resolve("npm.log");
                Process npm = new ProcessBuilder(npm(), "install", "--prefix", staging.toString(), "--no-audit", "--no-fund",
                        "--no-save", "dynalite@" + DYNALITE_VERSION)
                        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
                if (!npm.waitFor(5, TimeUnit.MINUTES)) {
                    npm.destroyForcibly();
                    throw new IllegalStateException("npm install dynalite@" + DYNALITE_VERSION + " did not end within 5 minutes");
                }
                if (npm.exitValue() != 0 || !Files.isRegularFile(staging.resolve("node_modules/dynalite/cli.js"))) {
                    String out = Files.readString(log, StandardCharsets.UTF_8);
                    ManagedProcess.deleteRecursively(staging);
                    throw new IllegalStateException("npm install dynalite@" + DYNALITE_VERSION + " into " + staging
                            + " exited " + npm.exitValue() + ":\n" + out);
                }
                ManagedProcess.deleteRecursively(dir); // a broken earlier install
                Files.move(staging, dir, StandardCopyOption.ATOMIC_MOVE);
                return cli;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not install dynalite into " + dir, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while installing dynalite", e);
        }
    }

    private static String npm() {
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(java.io.File.pathSeparator)) {
            Path npm = Path.of(dir, "npm");
            if (Files.isExecutable(npm)) {
                return npm.toString();
            }
        }
        throw new IllegalStateException("no npm on the PATH to install dynalite " + DYNALITE_VERSION + " with");
    }

    private static final class LocalStackContainer {
        static TestDynamoDb start() {
            var container = new org.testcontainers.containers.GenericContainer<>("localstack/localstack:4")
                    .withExposedPorts(4566)
                    .withEnv("SERVICES", "dynamodb");
            container.start();
            URI uri = URI.create("http://" + container.getHost() + ":" + container.getMappedPort(4566));
            if (!answers(uri, Duration.ofSeconds(60))) {
                container.stop();
                throw new IllegalStateException("the LocalStack container did not answer HTTP");
            }
            return new TestDynamoDb(uri, "testcontainers", container);
        }
    }
}
