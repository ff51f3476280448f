package dev.fenceguard.redis.internal;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisScriptingCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;

/** A scripting view of a standalone, Sentinel or Cluster connection, and whether we must close it. */
public record Connections(RedisScriptingCommands<String, String> commands, AutoCloseable owned, String topology,
        java.util.function.LongBinaryOperator waitForReplicas) {

    public static Connections of(RedisClient client) {
        StatefulRedisConnection<String, String> c = client.connect();
        return new Connections(c.sync(), c, "standalone", (n, ms) -> c.sync().waitForReplication((int) n, ms));
    }

    public static Connections of(RedisClusterClient client) {
        StatefulRedisClusterConnection<String, String> c = client.connect();
        return new Connections(c.sync(), c, "cluster", null);
    }

    public static Connections of(StatefulRedisConnection<String, String> connection) {
        return new Connections(connection.sync(), null, "standalone", (n, ms) -> connection.sync().waitForReplication((int) n, ms));
    }

    public static Connections of(StatefulRedisClusterConnection<String, String> connection) {
        return new Connections(connection.sync(), null, "cluster", null);
    }

    /** Closes the connection if fence-guard opened it. */
    public void close() {
        if (owned != null) {
            try {
                owned.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the Redis connection failed", e);
            }
        }
    }
}
