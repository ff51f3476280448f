package dev.fenceguard.examples;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.redis.FencedRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.UUID;

/**
 * The demo's lock and order in Redis, under a key prefix of their own whose keys are deleted on close.
 * The order is a string key; the fenced write is {@link FencedRedis#set}, the naive one a plain
 * {@code SET}.
 */
final class RedisOrderStore extends OrderStore {

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> conn;
    private final String prefix;
    private final FenceGuardRedis fenceGuard;
    private final FencedRedis guard;

    private RedisOrderStore(String uri, RedisClient client, StatefulRedisConnection<String, String> conn, String prefix,
            FenceGuardRedis fenceGuard) {
        super("Redis at " + uri, fenceGuard.lockBackend(), fenceGuard.idempotencyBackend());
        this.client = client;
        this.conn = conn;
        this.prefix = prefix;
        this.fenceGuard = fenceGuard;
        this.guard = fenceGuard.fencedWrites();
    }

    /** Connects to {@code redis://HOST:PORT}. */
    static RedisOrderStore open(String uri) {
        RedisClient client = RedisClient.create(uri);
        try {
            StatefulRedisConnection<String, String> conn = client.connect();
            String prefix = "fence-guard-demo:" + UUID.randomUUID().toString().substring(0, 8) + ":";
            // One place for both: the fenced writes refuse any resource key that could be one of the lock's keys.
            FenceGuardRedis fenceGuard = FenceGuardRedis.builder(conn).withKeyPrefix(prefix).withFenceKeyPrefix(prefix + "fence:")
                    .withMetrics(LockMetrics.none()).build();
            return new RedisOrderStore(uri, client, conn, prefix, fenceGuard);
        } catch (RuntimeException e) {
            client.shutdown();
            throw e;
        }
    }

    @Override
    void createOrder(String id) {
        conn.sync().set(orderKey(id), "new");
    }

    @Override
    WriteOutcome writeStatus(String id, String status, FenceToken fence, boolean fenced) {
        if (fenced) {
            return guard.set(orderKey(id), fence, status);
        }
        conn.sync().set(orderKey(id), status);
        return new WriteOutcome.Applied(orderKey(id), fence.value());
    }

    @Override
    String readStatus(String id) {
        return conn.sync().get(orderKey(id));
    }

    private String orderKey(String id) {
        return prefix + "order:" + id;
    }

    @Override
    public void close() {
        var keys = conn.sync().keys(prefix.replace("*", "\\*") + "*");
        if (!keys.isEmpty()) {
            conn.sync().del(keys.toArray(String[]::new));
        }
        fenceGuard.close();
        conn.close();
        client.shutdown();
    }
}
