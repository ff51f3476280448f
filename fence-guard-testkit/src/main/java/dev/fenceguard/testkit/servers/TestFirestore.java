package dev.fenceguard.testkit.servers;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * The Google Cloud Firestore emulator for tests, found once per JVM in this order:
 * <ol>
 *   <li>{@code FENCE_GUARD_TEST_FIRESTORE_EMULATOR_HOST}, e.g. {@code 127.0.0.1:8087};</li>
 *   <li>Testcontainers, when a Docker engine answers (the Cloud SDK emulators image);</li>
 *   <li>the emulator jar of a local Google Cloud SDK ({@code $CLOUDSDK_ROOT_DIR}, the directory of
 *       {@code gcloud}, or {@code /usr/lib/google-cloud-sdk}), started on a free 127.0.0.1 port.</li>
 * </ol>
 * If none works, {@link #server()} throws {@link ServerUnavailableException} naming all three.
 *
 * <p>Tests isolate themselves with {@link #newProjectId(String)}: the emulator keeps one database per
 * project id.
 *
 * @since 0.1
 */
public final class TestFirestore {

    /** The environment variable read first. */
    public static final String ENV = "FENCE_GUARD_TEST_FIRESTORE_EMULATOR_HOST";

    private static final String JAR = "platform/cloud-firestore-emulator/cloud-firestore-emulator.jar";
    private static final String MAIN = "com.google.cloud.datastore.emulator.firestore.CloudFirestore";

    private static TestFirestore instance;

    private final String hostPort;
    private final String origin;
    private final Object keepAlive;

    private TestFirestore(String hostPort, String origin, Object keepAlive) {
        this.hostPort = hostPort;
        this.origin = origin;
        this.keepAlive = keepAlive;
    }

    /** The shared emulator, found or started on first use. */
    public static synchronized TestFirestore server() {
        if (instance == null) {
            instance = find();
        }
        return instance;
    }

    /** {@code host:port} of the emulator. */
    public String hostPort() {
        return hostPort;
    }

    /** Where the emulator came from: {@code env}, {@code testcontainers} or {@code sdk}. */
    public String origin() {
        return origin;
    }

    /** A project id no other test run uses. */
    public static String newProjectId(String name) {
        return ("fgtest-" + name + "-" + UUID.randomUUID().toString().substring(0, 8)).toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return "TestFirestore[" + origin + " " + hostPort + "]";
    }

    private static boolean answersOk(String hostPort, Duration timeout) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        long deadline = System.nanoTime() + timeout.toNanos();
        do {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + hostPort + "/"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200 && r.body().trim().startsWith("Ok")) {
                    return true;
                }
            } catch (IOException e) {
                // not up yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            Ports.sleep(Duration.ofMillis(100));
        } while (System.nanoTime() < deadline);
        return false;
    }

    private static TestFirestore find() {
        return ServerSearch.find("Firestore emulator", ENV, "127.0.0.1:8087", hostPort -> {
            if (!answersOk(hostPort, Duration.ofSeconds(5))) {
                throw new IllegalStateException("GET / did not answer Ok");
            }
            return new TestFirestore(hostPort, "env", null);
        }, () -> EmulatorContainer.start(), "Cloud SDK emulator", () -> {
            Path jar = findJar();
            if (jar == null) {
                throw new IllegalStateException("no " + JAR + " under $CLOUDSDK_ROOT_DIR, gcloud's directory or /usr/lib/google-cloud-sdk");
            }
            return startJar(jar);
        });
    }

    private static Path findJar() {
        List<Path> roots = new ArrayList<>();
        String sdk = System.getenv("CLOUDSDK_ROOT_DIR");
        if (sdk != null) {
            roots.add(Path.of(sdk));
        }
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(java.io.File.pathSeparator)) {
            Path gcloud = Path.of(dir, "gcloud");
            if (Files.isExecutable(gcloud)) {
                try {
                    roots.add(gcloud.toRealPath().getParent().getParent());
                } catch (IOException ignored) {
                    // a broken link: try the next place
                }
            }
        }
        roots.add(Path.of("/usr/lib/google-cloud-sdk"));
        roots.add(Path.of("/usr/share/google-cloud-sdk"));
        for (Path root : roots) {
            Path jar = root.resolve(JAR);
            if (Files.isReadable(jar)) {
                return jar;
            }
        }
        return null;
    }

    private static TestFirestore startJar(Path jar) {
        int port = Ports.free();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ManagedProcess process = ManagedProcess.start("firestore-" + port, List.of(java, "-Xmx512m", "-cp",
                jar.toString(), MAIN, "start", "--host=127.0.0.1", "--port=" + port));
        String hostPort = "127.0.0.1:" + port;
        if (!answersOk(hostPort, Duration.ofSeconds(60))) {
            String tail = process.logTail();
            process.stop();
            throw new IllegalStateException("the emulator did not answer Ok on " + hostPort + " within 60 s:\n" + tail);
        }
        return new TestFirestore(hostPort, "sdk", process);
    }

    private static final class EmulatorContainer {
        static TestFirestore start() {
            var container = new org.testcontainers.containers.GenericContainer<>(
                    "gcr.io/google.com/cloudsdktool/google-cloud-cli:emulators")
                    .withExposedPorts(8080)
                    .withCommand("gcloud", "emulators", "firestore", "start", "--host-port=0.0.0.0:8080");
            container.start();
            String hostPort = container.getHost() + ":" + container.getMappedPort(8080);
            if (!answersOk(hostPort, Duration.ofSeconds(60))) {
                container.stop();
                throw new IllegalStateException("the emulator container did not answer Ok");
            }
            return new TestFirestore(hostPort, "testcontainers", container);
        }
    }
}
