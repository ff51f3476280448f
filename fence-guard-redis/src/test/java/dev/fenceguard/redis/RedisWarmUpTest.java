package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.servers.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** {@code warmUp()} of the Redis lock backend and fenced writes, on a server of their own (so its statistics are theirs). */
class RedisWarmUpTest {

    /** A test on a Redis server of its own, with an admin connection and a {@code FenceGuardRedis} on it. */
    private interface OnServer {
        void run(StatefulRedisConnection<String, String> admin, FenceGuardRedis redis) throws Exception;
    }

    private static void onFreshServer(OnServer test) throws Exception {
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try (StatefulRedisConnection<String, String> admin = client.connect();
                    FenceGuardRedis redis = FenceGuardRedis.builder(client).withMetrics(LockMetrics.none()).build()) {
                test.run(admin, redis);
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void warmUpLoadsEveryScriptWritesNoKeyAndSparesTheFirstCallsANoscript() throws Exception {
        onFreshServer((admin, redis) -> {
            LockClient locks = LockClient.builder(redis.lockBackend()).withMetrics(LockMetrics.none()).build();
            locks.warmUp();
            locks.async().warmUp().toCompletableFuture().join();
            redis.fencedWrites().warmUp();
            redis.fencedWrites().async().warmUp().toCompletableFuture().join();
            assertThat(admin.sync().dbsize()).as("keys after two warm-ups of each").isZero();
            // Not even a key written and removed again: the warm-ups' calls found nothing to change.
            assertThat(admin.sync().info("persistence")).as("changes made by the warm-ups").contains("rdb_changes_since_last_save:0");
            admin.sync().configResetstat();

            try (Lease lease = locks.tryAcquire("orders:1", Duration.ofSeconds(30)).orElseThrow()) {
                assertThat(redis.fencedWrites().set("order:1", lease.fence(), "paid")).isInstanceOf(WriteOutcome.Applied.class);
                assertThat(redis.fencedWrites().hset("order:2", lease.fence(), Map.of("status", "paid")))
                        .isInstanceOf(WriteOutcome.Applied.class);
                assertThat(redis.fencedWrites().delete("order:3", lease.fence())).isInstanceOf(WriteOutcome.Applied.class);
                assertThat(redis.fencedWrites().claim("order:1", lease.fence())).isInstanceOf(WriteOutcome.Applied.class);
                assertThat(locks.extend(lease, Duration.ofSeconds(30))).isTrue();
                assertThat(locks.lookup("orders:1")).isPresent();
            }
            assertThat(admin.sync().info("errorstats")).as("errors after warm-up").doesNotContain("NOSCRIPT");
            assertThat(admin.sync().info("commandstats")).as("commands after warm-up: EVALSHA only")
                    .contains("cmdstat_evalsha:").doesNotContain("cmdstat_eval:");
        });
    }

    @Test
    void withoutWarmUpTheFirstCallsPayANoscriptAndAnEval() throws Exception {
        // The control for the test above: on a fresh server the same first write is answered NOSCRIPT.
        onFreshServer((admin, redis) -> {
            assertThat(redis.fencedWrites().set("order:1", FenceToken.of(1), "paid")).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(admin.sync().info("errorstats")).contains("NOSCRIPT");
            assertThat(admin.sync().info("commandstats")).contains("cmdstat_eval:");
        });
    }

    @Test
    void warmUpOnAConnectionThatIsDownFailsUnavailable() {
        StatefulRedisConnection<String, String> closed = RedisSupport.shared().connect();
        FenceGuardRedis redis = FenceGuardRedis.builder(closed).withMetrics(LockMetrics.none()).build();
        closed.close();
        LockClient locks = LockClient.builder(redis.lockBackend()).withMetrics(LockMetrics.none()).build();
        assertThatThrownBy(locks::warmUp).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
            assertThat(e.key()).as("a warm-up concerns no key").isEmpty();
        });
        assertThatThrownBy(() -> redis.fencedWrites().warmUp()).isInstanceOfSatisfying(FenceGuardException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE));
        assertThatThrownBy(() -> redis.fencedWrites().async().warmUp().toCompletableFuture().join())
                .isInstanceOf(CompletionException.class).cause().isInstanceOfSatisfying(FenceGuardException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE));
    }
}
