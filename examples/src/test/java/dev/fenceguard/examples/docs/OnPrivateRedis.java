package dev.fenceguard.examples.docs;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.testkit.servers.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * A private {@code redis-server} per test class, for samples that use fixed keys and the default
 * prefixes: a client and a connection on it, and per test a fresh {@link FenceGuardRedis} and lock client.
 */
abstract class OnPrivateRedis {

    static RedisServers.Server server;
    static RedisClient client;
    static StatefulRedisConnection<String, String> conn;

    FenceGuardRedis redis;
    LockClient locks;

    @BeforeAll
    static void startServer() {
        server = RedisServers.start();
        client = RedisClient.create(server.uri().toString());
        conn = client.connect();
    }

    @AfterAll
    static void stopServer() {
        conn.close();
        client.shutdown();
        server.close();
    }

    @BeforeEach
    void entry() {
        redis = FenceGuardRedis.builder(client).build();
        locks = LockClient.of(redis.lockBackend());
    }

    @AfterEach
    void closeEntry() {
        redis.close();
    }
}
