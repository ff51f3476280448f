package dev.fenceguard.redis.internal;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.api.sync.RedisScriptingCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;

/**
 * Blocking and asynchronous scripting views of one standalone, Sentinel or Cluster connection, and
 * whether we must close it. {@code waitForReplicas} is null on Cluster, where WAIT cannot be routed.
 */
public record Connections(RedisScriptingCommands<String, String> commands, RedisScriptingAsyncCommands<String, String> async,
        AutoCloseable owned, String topology, ReplicaWait waitForReplicas) {

    /** {@code WAIT replicas timeout}, sent asynchronously. */
    @FunctionalInterface
    public interface ReplicaWait {
        RedisFuture<Long> send(int replicas, long timeoutMillis);
    }

    public static Connections of(RedisClient client) {
        StatefulRedisConnection<String, String> c = client.connect();
        return new Connections(c.sync(), c.async(), c, "standalone", (n, ms) -> c.async().waitForReplication(n, ms));
    }

    public static Connections of(RedisClusterClient client) {
        StatefulRedisClusterConnection<String, String> c = client.connect();
        return new Connections(c.sync(), c.async(), c, "cluster", null);
    }

    public static Connections of(StatefulRedisConnection<String, String> connection) {
        return new Connections(connection.sync(), connection.async(), null, "standalone",
                (n, ms) -> connection.async().waitForReplication(n, ms));
    }

    public static Connections of(StatefulRedisClusterConnection<String, String> connection) {
        return new Connections(connection.sync(), connection.async(), null, "cluster", null);
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
