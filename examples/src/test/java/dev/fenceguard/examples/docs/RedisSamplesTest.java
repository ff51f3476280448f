package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.redis.FencedRedis;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/**
 * Runs the samples of docs/redis.md and of the redis module's Javadoc on a private {@code redis-server}
 * (the samples use fixed keys and the default prefixes), and checks what each promises.
 */
class RedisSamplesTest extends OnPrivateRedis {

    private static RedisCommands<String, String> cmd() {
        return conn.sync();
    }

    /** The fence the stock key holds: the one its fence key recorded. */
    private String storedFence(String key) {
        return cmd().get(redis.fencedWrites().fenceKeyOf(key));
    }

    @Test
    void setUpSamplesWriteTheStockWithTheFenceOfTheLock() throws Exception {
        RedisSamples.docSetUp(server.uri().toString());
        assertThat(cmd().get("stock:sku-1")).isEqualTo("41");
        String first = cmd().get("fg:{sku-1}:fence");
        assertThat(Long.parseLong(storedFence("stock:sku-1"))).isEqualTo(Long.parseLong(first));
        assertThat(cmd().exists("fg:{sku-1}:lock")).as("released").isZero();

        RedisSamples.javadocEntry(server.uri().toString());
        assertThat(Long.parseLong(storedFence("stock:sku-1"))).isEqualTo(Long.parseLong(cmd().get("fg:{sku-1}:fence")))
                .isGreaterThan(Long.parseLong(first));
    }

    @Test
    void horizonSampleExpiresTombstonesAndRefusesOldFencesOnAbsentKeys() throws Exception {
        try (FenceGuardRedis withHorizon = RedisSamples.docHorizon(client)) {
            FencedRedis writes = withHorizon.fencedWrites();
            long fence = LockClient.of(withHorizon.lockBackend()).withLock("order-9", Duration.ofSeconds(30), Duration.ofSeconds(5),
                    lease -> {
                        writes.delete("order:9", lease.fence()).orThrow();
                        return lease.fence().value();
                    }).orElseThrow();
            assertThat(cmd().pexpiretime(writes.fenceKeyOf("order:9"))).as("the first millisecond above the fence, plus 7 days and 5 minutes")
                    .isEqualTo(1_735_689_600_000L + fence / 100 + 1 + Duration.ofDays(7).plusMinutes(5).toMillis());
            WriteOutcome zombie = writes.set("order:10", FenceToken.of(fence - Duration.ofDays(8).toMillis() * 100), "x");
            assertThat(zombie).isInstanceOfSatisfying(WriteOutcome.Stale.class,
                    s -> assertThat(s.reason()).isEqualTo(WriteOutcome.Stale.Reason.BELOW_HORIZON));
        }
    }

    @Test
    void asyncSamplesWriteUnderTheLock() {
        assertThat(RedisSamples.docAsync(redis, locks)).hasValueSatisfying(o -> assertThat(o).isInstanceOf(WriteOutcome.Applied.class));
        assertThat(cmd().get("stock:sku-1")).isEqualTo("41");
        cmd().del("stock:sku-1");
        assertThat(RedisSamples.javadocAsync(redis, locks, Duration.ofSeconds(30), Duration.ofSeconds(5)))
                .hasValueSatisfying(o -> assertThat(o).isInstanceOf(WriteOutcome.Applied.class));
        assertThat(cmd().get("stock:sku-1")).isEqualTo("41");
        assertThat(locks.lookup("sku-1")).as("released").isEmpty();
    }

    @Test
    void claimFirstSamplesSellTwoEachAndShutOutTheZombie() throws Exception {
        cmd().set("{sku-1}:stock", "10");
        Lease zombie = locks.acquire("sku-1", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow();
        zombie.close();   // its holder stalls past the lease; the samples take the lock after it

        RedisSamples.docClaimFirst(redis, locks, conn);
        assertThat(cmd().get("{sku-1}:stock")).isEqualTo("8");
        assertThat(RedisSamples.docClaimFirstAsync(redis, locks, conn))
                .hasValueSatisfying(o -> assertThat(o).isInstanceOf(WriteOutcome.Applied.class));
        assertThat(cmd().get("{sku-1}:stock")).isEqualTo("6");

        assertThat(redis.fencedWrites().set("{sku-1}:stock", zombie.fence(), "9")).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(cmd().get("{sku-1}:stock")).isEqualTo("6");
    }

    @Test
    void lockBackendSampleHandsTheFenceToTheWorkAndReleases() throws Exception {
        RedisSamples.Orders orders = new RedisSamples.Orders();
        RedisSamples.lockBackend(client, orders);
        assertThat(orders.shipped.get(42L).value()).isEqualTo(Long.parseLong(cmd().get("fg:{orders:42}:fence")));
        assertThat(locks.lookup("orders:42")).as("released").isEmpty();
    }

    @Test
    void fencedWritesSampleWritesWithTheFenceAndRefusesAZombie() throws Exception {
        Lease older = locks.acquire("sku-1", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow();
        older.close();
        try (Lease lease = locks.acquire("sku-1", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow()) {
            RedisSamples.fencedWrites(client, lease);
            assertThat(cmd().get("stock:sku-1")).isEqualTo("41");
            assertThat(cmd().hget("order:42", "status")).isEqualTo("paid");
            assertThat(cmd().hget("order:42", "_fence")).isEqualTo(Long.toString(lease.fence().value()));
        }
        assertThatThrownBy(() -> RedisSamples.fencedWrites(client, older)).isInstanceOf(StaleFenceException.class);
        assertThat(cmd().hget("order:42", "_fence")).as("unchanged").isNotEqualTo(Long.toString(older.fence().value()));
    }

    @Test
    void flightStoreSampleComputesOnceAndKeepsTheResultInRedis() throws Exception {
        SingleflightSamples.RateProvider provider = new SingleflightSamples.RateProvider();
        RedisSamples.flightStore(client, locks, provider);
        assertThat(provider.calls).hasValue(1);
        String result = cmd().get("fg-sf:{rates:2026-11-23}:result");
        assertThat(result).endsWith(":" + Base64.getEncoder().encodeToString("EUR/USD 1.0842".getBytes(StandardCharsets.UTF_8)));
    }
}
