package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.micrometer.MicrometerLockObservations;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Fenced writes on the shared Redis as {@code fenceguard.write} observations, nested under {@code withLock}. */
@Timeout(120) // a guard against a hang, not a timing assertion
class FencedRedisObservationTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final FenceToken HIGHEST = FenceToken.of(900_000_000_000_000L);

    private final String prefix = "fg-test:observed:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    /** Not a resource key: resource keys may show in errors (as every fence-guard error names its resource), a lock key never. */
    private final String lockKey = "inventory-lock-" + UUID.randomUUID();
    private final TestObservationRegistry registry = TestObservationRegistry.create();
    private final LockObservations observations = MicrometerLockObservations.of(registry);
    private final List<FenceGuardRedis> built = new ArrayList<>();

    private FenceGuardRedis redis(LockObservations observations) {
        FenceGuardRedis redis = FenceGuardRedis.builder(RedisSupport.shared()).withKeyPrefix(prefix + "lock:")
                .withFenceKeyPrefix(prefix + "fence:").withMetrics(LockMetrics.none()).withObservations(observations).build();
        built.add(redis);
        return redis;
    }

    private LockClient locks(FenceGuardRedis redis) {
        return LockClient.builder(redis.lockBackend()).withMetrics(LockMetrics.none()).withObservations(observations).build();
    }

    @AfterEach
    void cleanUp() {
        built.forEach(FenceGuardRedis::close);
        RedisSupport.deleteKeys(prefix);
    }

    @Test
    void everyFencedWriteInsideWithLockIsAChildOfItWithItsResourceTypeOperationAndOutcome() throws Exception {
        FenceGuardRedis redis = redis(observations);
        FencedRedis writes = redis.fencedWrites();
        String stock = prefix + "stock:sku-4711";
        String order = prefix + "order:4711";
        String newer = prefix + "stock:sku-newer";
        assertThat(writes.set(newer, HIGHEST, "written by a newer holder")).isInstanceOf(WriteOutcome.Applied.class);
        List<String> lockIds = new ArrayList<>();
        locks(redis).withLock(lockKey, TTL, Duration.ZERO, lease -> {
            lockIds.add(lease.lockId().value());
            FenceToken fence = lease.fence();
            assertThat(writes.set(stock, fence, "41")).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(writes.set(newer, fence, "zombie")).isInstanceOf(WriteOutcome.Stale.class);
            assertThat(FencedRedisTest.join(writes.async().hset(order, fence, Map.of("status", "paid"))))
                    .as("the asynchronous face, started on the work's thread").isInstanceOf(WriteOutcome.Applied.class);
            assertThatThrownBy(() -> writes.hset(stock, fence, Map.of("status", "paid"))).as("a hash write to a string")
                    .isInstanceOf(FenceGuardException.class);
            assertThat(writes.claim(order, fence)).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(writes.eval("redis.call('SET', KEYS[1], ARGV[1])", List.of(stock), fence, List.of("40")).outcome())
                    .isInstanceOf(WriteOutcome.Applied.class);
            assertThat(writes.delete(stock, fence)).isInstanceOf(WriteOutcome.Applied.class);
            return "done";
        });

        List<String> seen = new ArrayList<>();
        TestObservationRegistryAssert.assertThat(registry)
                .hasHandledContextsThatSatisfy(contexts -> contexts.stream().filter(c -> c.getName().equals(LockObservations.WRITE))
                        .forEach(c -> seen.add(c.getLowCardinalityKeyValue("resource.type").getValue() + " "
                                + c.getLowCardinalityKeyValue("operation").getValue() + " "
                                + c.getLowCardinalityKeyValue("outcome").getValue() + " "
                                + (c.getParentObservation() == null ? "no parent" : c.getParentObservation().getContextView().getName()))));
        assertThat(seen).containsExactly(
                "string set applied no parent", // the newer holder's write, outside withLock
                "string set applied fenceguard.with.lock",
                "string set stale fenceguard.with.lock",
                "hash hset applied fenceguard.with.lock",
                "hash hset error fenceguard.with.lock",
                "key claim applied fenceguard.with.lock",
                "script eval applied fenceguard.with.lock",
                "key delete applied fenceguard.with.lock");
        TestObservationRegistryAssert.assertThat(registry)
                .forAllObservationsWithNameEqualTo(LockObservations.WRITE, o -> o.hasLowCardinalityKeyValue("backend", "redis"))
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("outcome", "error")
                        .assertThatError().isInstanceOf(FenceGuardException.class));
        assertThat(recorded(false)).as("names and key values").isNotEmpty().noneMatch(v -> v.contains(prefix));
        assertThat(recorded(true)).as("everything recorded").noneMatch(v -> v.contains(lockIds.getFirst()) || v.contains(lockKey));
    }

    @Test
    void writesWithoutObservationsObserveNothingEvenInsideAnObservedWithLock() throws Exception {
        FenceGuardRedis redis = redis(LockObservations.none());
        FencedRedis writes = redis.fencedWrites();
        String stock = prefix + "stock:sku-4711";
        locks(redis).withLock(lockKey, TTL, Duration.ZERO, lease -> writes.set(stock, lease.fence(), "41").orThrow());

        TestObservationRegistryAssert.assertThat(registry)
                .hasHandledContextsThatSatisfy(contexts -> assertThat(contexts).extracting(Observation.Context::getName)
                        .contains("fenceguard.with.lock", "fenceguard.acquire", "fenceguard.release")
                        .doesNotContain(LockObservations.WRITE));
        try (StatefulRedisConnection<String, String> c = RedisSupport.shared().connect()) {
            assertThat(c.sync().get(stock)).isEqualTo("41");
        }
    }

    @Test
    void argumentsRefusedBeforeAnyIoAreNotObserved() {
        FencedRedis writes = redis(observations).fencedWrites();
        assertThatThrownBy(() -> writes.set("", HIGHEST, "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> writes.async().eval("return 1", List.of(), HIGHEST, List.of())).isInstanceOf(IllegalArgumentException.class);
        TestObservationRegistryAssert.assertThat(registry).doesNotHaveAnyObservation();
    }

    /** Every name, contextual name and key value the registry handled, and if asked every error message. */
    private List<String> recorded(boolean errors) {
        List<String> values = new ArrayList<>();
        TestObservationRegistryAssert.assertThat(registry).hasHandledContextsThatSatisfy(contexts -> contexts.forEach(c -> {
            values.add(c.getName());
            values.add(String.valueOf(c.getContextualName()));
            c.getAllKeyValues().forEach(kv -> values.add(kv.getKey() + "=" + kv.getValue()));
            if (errors && c.getError() != null) {
                values.add(String.valueOf(c.getError().getMessage()));
            }
        }));
        return values;
    }
}
