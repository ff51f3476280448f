package dev.fenceguard.zookeeper;

import java.util.Map;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * The ZooKeeper the shared tests run on, found once per JVM as the testkit finds its servers: the
 * environment variable {@value #ENV} (a connect string, e.g. {@code 127.0.0.1:2181}) first, else an
 * in-process curator-test {@link TestingServer} on a free port (no Docker needed). Tests isolate
 * themselves with {@link #newRoot}: every lock node lives under a root path of its own. The fault
 * tests start servers of their own, since they stop them.
 */
final class TestZooKeeper {

    static final String ENV = "FENCE_GUARD_TEST_ZOOKEEPER";

    private static String connectString;
    private static TestingServer server;

    private TestZooKeeper() {}

    static synchronized String connectString() {
        if (connectString == null) {
            String env = System.getenv(ENV);
            if (env != null && !env.isBlank()) {
                connectString = env.trim();
            } else {
                try {
                    server = new TestingServer(spec(-1), true);
                } catch (Exception e) {
                    throw new IllegalStateException(ENV + " is not set and the in-process TestingServer did not start", e);
                }
                connectString = server.getConnectString();
            }
        }
        return connectString;
    }

    /**
     * An in-process server's settings: a free port, a temporary data directory, a 500 ms tick, and session
     * timeouts from 1 s (the session tests) to 60 s (the contract suites lease for 30 s, and a TTL may not
     * exceed the session timeout).
     */
    static InstanceSpec spec(int serverId) {
        return new InstanceSpec(null, -1, -1, -1, true, serverId, 500, 0,
                Map.of("minSessionTimeout", "1000", "maxSessionTimeout", "60000"));
    }

    /** A started Curator client on the shared server, with Curator's default session timeout (60 s asked). */
    static CuratorFramework newClient() {
        return newClient(connectString(), 60_000);
    }

    /** A started Curator client on {@code connect}, asking for {@code sessionMillis}. */
    static CuratorFramework newClient(String connect, int sessionMillis) {
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(connect).sessionTimeoutMs(sessionMillis)
                .connectionTimeoutMs(10_000).retryPolicy(new RetryOneTime(100)).build();
        client.start();
        try {
            if (!client.blockUntilConnected(30, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new IllegalStateException("no connection to ZooKeeper at " + connect + " within 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return client;
    }

    /** A root path no other test run uses. */
    static String newRoot(String name) {
        return "/fgtest/" + name + "-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
