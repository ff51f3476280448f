package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.servers.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The backend and the fenced writes (both faces) through a Sentinel-managed master (a RedisClient with a Sentinel URI). */
class RedisSentinelTest {

    @Test
    void locksAndFencedWritesWorkThroughSentinel() {
        try (RedisServers.Server master = RedisServers.start();
                RedisServers.Server sentinel = RedisServers.sentinel(master.port(), "fgmaster")) {
            RedisClient client = RedisClient.create(RedisURI.Builder.sentinel("127.0.0.1", sentinel.port(), "fgmaster").build());
            try (FenceGuardRedis redis = FenceGuardRedis.builder(client).withMetrics(LockMetrics.none()).build()) {
                LockClient locks = LockClient.builder(redis.lockBackend()).withMetrics(LockMetrics.none()).build();
                FencedRedis fenced = redis.fencedWrites();
                Lease first = locks.tryAcquire("orders:1", Duration.ofSeconds(30)).orElseThrow();
                assertThat(locks.tryAcquire("orders:1", Duration.ofSeconds(30))).isEmpty();
                assertThat(fenced.set("order:1", first.fence(), "paid")).isInstanceOf(WriteOutcome.Applied.class);
                first.close();
                Lease second = locks.tryAcquire("orders:1", Duration.ofSeconds(30)).orElseThrow();
                assertThat(second.fence()).isGreaterThan(first.fence());
                assertThat(fenced.set("order:1", second.fence(), "paid again")).isInstanceOf(WriteOutcome.Applied.class);
                assertThat(fenced.set("order:1", first.fence(), "zombie")).isInstanceOf(WriteOutcome.Stale.class);
                assertThat(fenced.async().set("order:1", first.fence(), "async zombie").toCompletableFuture().join())
                        .isInstanceOf(WriteOutcome.Stale.class);
                assertThat(fenced.async().set("order:1", second.fence(), "shipped").toCompletableFuture().join())
                        .isInstanceOf(WriteOutcome.Applied.class);
                second.close();
            } finally {
                client.shutdown();
            }
        }
    }
}
