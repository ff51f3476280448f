package dev.fenceguard.redis;

import dev.fenceguard.testkit.servers.RedisCluster;
import dev.fenceguard.testkit.servers.RedisServers;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import java.util.List;

/** Shared clients for the tests; deletes only keys under the prefixes it hands out. */
final class RedisSupport {

    private static RedisClient shared;
    private static RedisCluster cluster;
    private static RedisClusterClient clusterClient;
    private static RedisClient sentinelClient;

    private RedisSupport() {}

    static synchronized RedisClient shared() {
        if (shared == null) {
            shared = RedisClient.create(RedisURI.create(TestRedis.server().uri()));
            Runtime.getRuntime().addShutdownHook(new Thread(shared::shutdown));
        }
        return shared;
    }

    /** A private 3-master cluster for this JVM, stopped at exit. */
    static synchronized RedisClusterClient cluster() {
        if (clusterClient == null) {
            cluster = RedisCluster.start(3);
            clusterClient = RedisClusterClient.create(cluster.uris().stream().map(RedisURI::create).toList());
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                clusterClient.shutdown();
                cluster.close();
            }));
        }
        return clusterClient;
    }

    /** A client of a private master watched by a private Sentinel (master name {@code fgmaster}), stopped at exit. */
    static synchronized RedisClient sentinel() {
        if (sentinelClient == null) {
            RedisServers.Server master = RedisServers.start();
            RedisServers.Server sentinel = RedisServers.sentinel(master.port(), "fgmaster");
            sentinelClient = RedisClient.create(RedisURI.Builder.sentinel("127.0.0.1", sentinel.port(), "fgmaster").build());
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                sentinelClient.shutdown();
                sentinel.close();
                master.close();
            }));
        }
        return sentinelClient;
    }

    /**
     * A builder on the shared server whose lock, fence and flight keys all start with {@code prefix}
     * ({@code lock:}, {@code fence:}, {@code sf:} after it), so that {@link #deleteKeys(String)} of the prefix removes them all.
     */
    static FenceGuardRedis.Builder under(String prefix) {
        return FenceGuardRedis.builder(shared()).withKeyPrefix(prefix + "lock:").withFenceKeyPrefix(prefix + "fence:")
                .withFlightKeyPrefix(prefix + "sf:");
    }

    /** Deletes every key of the shared server that starts with {@code prefix}. */
    static void deleteKeys(String prefix) {
        try (StatefulRedisConnection<String, String> c = shared().connect()) {
            ScanCursor cursor = ScanCursor.INITIAL;
            do {
                KeyScanCursor<String> page = c.sync().scan(cursor, ScanArgs.Builder.matches(globEscape(prefix) + "*").limit(500));
                List<String> keys = page.getKeys();
                if (!keys.isEmpty()) {
                    c.sync().del(keys.toArray(String[]::new));
                }
                cursor = page;
            } while (!cursor.isFinished());
        }
    }

    private static String globEscape(String s) {
        return s.replaceAll("([*?\\[\\]\\\\])", "\\\\$1");
    }
}
