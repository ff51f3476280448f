package dev.fenceguard.testkit.servers;

import java.net.URI;
import java.time.Duration;
import java.util.UUID;

/**
 * The Redis server for tests, found once per JVM in this order:
 * <ol>
 *   <li>{@code FENCE_GUARD_TEST_REDIS_URL}, e.g. {@code redis://127.0.0.1:6379};</li>
 *   <li>Testcontainers, when a Docker engine answers;</li>
 *   <li>{@code redis-server} from the PATH, started without persistence on a free 127.0.0.1 port.</li>
 * </ol>
 * If none works, {@link #server()} throws {@link ServerUnavailableException} naming all three.
 *
 * <p>The server is shared: tests isolate themselves with {@link #keyPrefix(String)} and delete only
 * their own keys. Fault tests (restart, FLUSHALL, failover, Cluster) start their own servers with
 * {@link RedisServers}.
 *
 * @since 0.1
 */
public final class TestRedis {

    /** The environment variable read first. */
    public static final String ENV = "FENCE_GUARD_TEST_REDIS_URL";

    private static TestRedis instance;

    private final URI uri;
    private final String origin;
    private final Object keepAlive;

    private TestRedis(URI uri, String origin, Object keepAlive) {
        this.uri = uri;
        this.origin = origin;
        this.keepAlive = keepAlive;
    }

    /** The shared server, found or started on first use. */
    public static synchronized TestRedis server() {
        if (instance == null) {
            instance = find();
        }
        return instance;
    }

    /** The server's URI, {@code redis://host:port}. */
    public URI uri() {
        return uri;
    }

    /** Where the server came from: {@code env}, {@code testcontainers} or {@code redis-server}. */
    public String origin() {
        return origin;
    }

    /** A key prefix no other test run uses: {@code fgtest:<name>:<random>:}. */
    public static String keyPrefix(String name) {
        return "fgtest:" + name + ":" + UUID.randomUUID().toString().substring(0, 8) + ":";
    }

    @Override
    public String toString() {
        return "TestRedis[" + origin + " " + uri + "]";
    }

    private static TestRedis find() {
        return ServerSearch.find("Redis", ENV, "redis://127.0.0.1:6379", url -> {
            URI uri = URI.create(url);
            int port = uri.getPort() > 0 ? uri.getPort() : 6379;
            if (Ports.awaitListening(port, Duration.ofSeconds(2)) || !"127.0.0.1".equals(uri.getHost())) {
                return new TestRedis(uri, "env", null);
            }
            throw new IllegalStateException("nothing listens there");
        }, () -> RedisContainer.start(), "redis-server", () -> {
            RedisServers.Server server = RedisServers.start();
            return new TestRedis(server.uri(), "redis-server", server);
        });
    }

    private static final class RedisContainer {
        static TestRedis start() {
            var container = new org.testcontainers.containers.GenericContainer<>("redis:7-alpine").withExposedPorts(6379);
            container.start();
            URI uri = URI.create("redis://" + container.getHost() + ":" + container.getMappedPort(6379));
            return new TestRedis(uri, "testcontainers", container);
        }
    }
}
