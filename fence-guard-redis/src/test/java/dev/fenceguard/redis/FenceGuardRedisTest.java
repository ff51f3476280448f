package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.servers.Ports;
import dev.fenceguard.testkit.servers.RedisServers;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The module's entry point: one connection and one set of settings for the lock backend and the fenced writes. */
class FenceGuardRedisTest {

    @Test
    void theLockBackendAndTheFencedWritesShareOneConnectionThatCloseCloses() {
        try (RedisServers.Server server = RedisServers.start()) {
            RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
            try (StatefulRedisConnection<String, String> admin = client.connect()) {
                assertThat(connectedClients(admin)).as("the test's own connection").isEqualTo(1);
                FenceGuardRedis redis = FenceGuardRedis.builder(client).withMetrics(LockMetrics.none()).build();
                LockClient locks = LockClient.builder(redis.lockBackend()).withMetrics(LockMetrics.none()).build();
                try (Lease lease = locks.tryAcquire("orders:1", Duration.ofSeconds(30)).orElseThrow()) {
                    assertThat(redis.fencedWrites().set("order:1", lease.fence(), "paid")).isInstanceOf(WriteOutcome.Applied.class);
                    assertThat(redis.fencedWrites(FencePolicy.STRICTLY_NEWER).async().claim("order:1", lease.fence())
                            .toCompletableFuture().join()).as("once per lease: the set used it").isInstanceOf(WriteOutcome.Stale.class);
                }
                assertThat(connectedClients(admin)).as("locks, writes of both policies and both faces on one connection").isEqualTo(2);
                redis.close();
                assertThatThrownBy(() -> redis.fencedWrites().set("order:1", FenceToken.of(9), "after close")).as("a write after close")
                        .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE));
                assertThat(admin.sync().get("order:1")).isEqualTo("paid");
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void aConnectionPassedInIsNotClosed() {
        StatefulRedisConnection<String, String> conn = RedisSupport.shared().connect();
        try {
            FenceGuardRedis.builder(conn).withMetrics(LockMetrics.none()).build().close();
            assertThat(conn.isOpen()).isTrue();
            assertThat(conn.sync().ping()).isEqualTo("PONG");
        } finally {
            conn.close();
        }
    }

    @Test
    void eachPolicyHasOneWriterWhoseFacesAgree() {
        try (FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withMetrics(LockMetrics.none()).build()) {
            assertThat(redis.fencedWrites().policy()).isEqualTo(FencePolicy.SAME_OR_NEWER);
            assertThat(redis.fencedWrites()).isSameAs(redis.fencedWrites(FencePolicy.SAME_OR_NEWER));
            FencedRedis strict = redis.fencedWrites(FencePolicy.STRICTLY_NEWER);
            assertThat(strict.policy()).isEqualTo(FencePolicy.STRICTLY_NEWER);
            assertThat(strict.async().policy()).isEqualTo(FencePolicy.STRICTLY_NEWER);
            assertThatThrownBy(() -> redis.fencedWrites(null)).isInstanceOf(NullPointerException.class).hasMessage("policy");
        }
    }

    @Test
    void theFencedWritesRefuseTheirOwnLockBackendsKeySpaceWithoutBeingTold() {
        StatefulRedisConnection<String, String> closed = RedisSupport.shared().connect();
        FenceGuardRedis redis = FenceGuardRedis.builder(closed).withKeyPrefix("app:locks:").withMetrics(LockMetrics.none()).build();
        closed.close(); // a refusal must come before any I/O
        String lockKey = redis.lockBackend().lockKeyOf("orders:1");
        assertThat(lockKey).startsWith("app:locks:{");
        assertThatThrownBy(() -> redis.fencedWrites().set(lockKey, FenceToken.of(1), "x")).as("blocking set of the lock's key")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock backend with key prefix 'app:locks:'");
        assertThatThrownBy(() -> redis.fencedWrites().async().delete(redis.lockBackend().fenceKeyOf("orders:1"), FenceToken.of(1)))
                .as("async delete of the lock's counter").isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("could rewind a lock's fence");
    }

    @Test
    void badSettingsAreRefusedBeforeConnectingAndSayWhatWasGiven() {
        RedisClient nowhere = RedisClient.create(RedisURI.create("redis://127.0.0.1:" + Ports.refused()));
        RedisClusterClient nowhereCluster = RedisClusterClient.create(RedisURI.create("redis://127.0.0.1:" + Ports.refused()));
        try {
            FenceGuardRedis.Builder b = FenceGuardRedis.builder(nowhere);
            assertThatThrownBy(() -> b.withCallTimeout(Duration.ZERO)).as("call timeout 0")
                    .hasMessage("callTimeout must be between 1 ms and 10 minutes, was PT0S");
            assertThatThrownBy(() -> b.withCallTimeout(Duration.ofMinutes(11))).as("call timeout 11 min")
                    .hasMessage("callTimeout must be between 1 ms and 10 minutes, was PT11M");
            assertThatThrownBy(() -> b.withCallTimeout(null)).as("null call timeout").isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> b.withFenceField("")).as("empty fence field").hasMessage("fence field must not be empty");
            assertThatThrownBy(() -> b.withReplicaAcknowledgement(0, Duration.ofMillis(10))).as("0 replicas")
                    .hasMessage("replicas must be at least 1, was 0");
            assertThatThrownBy(() -> b.withReplicaAcknowledgement(1, Duration.ofNanos(1500))).as("sub-millisecond replica timeout")
                    .hasMessage("replica timeout must be whole non-negative milliseconds, was PT0.0000015S");
            assertThatThrownBy(() -> b.withKeyPrefix("x".repeat(65))).as("a 65-character key prefix")
                    .hasMessageContaining("at most 64 characters");
            assertThatThrownBy(() -> b.withMetrics(null)).as("null metrics").isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> FenceGuardRedis.builder(nowhereCluster).withReplicaAcknowledgement(1, Duration.ofMillis(10)).build())
                    .as("replica acknowledgement on a Cluster").isInstanceOf(IllegalStateException.class).hasMessageContaining("Cluster");
            assertThatThrownBy(() -> FenceGuardRedis.builder((RedisClient) null)).isInstanceOf(NullPointerException.class)
                    .hasMessage("client");
        } finally {
            nowhere.shutdown();
            nowhereCluster.shutdown();
        }
    }

    private static long connectedClients(StatefulRedisConnection<String, String> admin) {
        return Long.parseLong(admin.sync().info("clients").lines().filter(l -> l.startsWith("connected_clients:")).findFirst()
                .orElseThrow().substring("connected_clients:".length()).strip());
    }
}
