package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.testkit.ZombieStorm;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The zombie storm with fence records expiring beside it, Redis's counterpart of
 * {@code PostgresPurgeStormTest} (fence-guard-jooq): a clock-floored Redis lock; the counter and
 * {@value #SIDE_KEYS} side keys written through a {@link FencedRedis} with a horizon of 1 s and no clock
 * margin, so that tombstones expire while the storm runs (Redis's expiry is the purge: there is no purge
 * loop). Each claim first deletes the side key chosen by its fence, leaving a tombstone; each write first
 * re-creates it with the same fence. A zombie (stalled for twice the 1.5 s lease, so its fence is older
 * than the horizon when it wakes) meets a newer lease's tombstone, its own, or nothing because it expired:
 * each must refuse it or admit it exactly as the rule says, so no side write is ever applied below a fence
 * its key recorded. Size: 300 attempts, or {@code -Dfenceguard.storm.attempts=N}; about 12 stalls whatever
 * the size. Nothing is timed: after the storm the test waits for Redis's clock (bounded by a minute) to
 * pass the expiry of every fence written, and then no side tombstone may be left.
 */
class RedisExpiryStormTest {

    static final int SIDE_KEYS = 256;
    private static final Duration TTL = Duration.ofMillis(1500);
    private static final Duration HORIZON = Duration.ofSeconds(1);

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLostWhileTombstonesExpire() throws Exception {
        String prefix = TestRedis.keyPrefix("expirystorm");
        try (StatefulRedisConnection<String, String> c = RedisSupport.shared().connect();
                FenceGuardRedis redis = RedisSupport.under(prefix).withHorizon(HORIZON).withClockMargin(Duration.ZERO)
                        .withMetrics(LockMetrics.none()).build()) {
            RedisCommands<String, String> admin = c.sync();
            FencedRedis w = redis.fencedWrites();
            SideKeys side = new SideKeys(w, prefix + "side:");
            ZombieStorm.FencedCounter counter = side.around(RedisStorms.counter(w, admin, prefix + "counter"));
            int attempts = ZombieStorm.attemptsProperty(300);
            ZombieStorm.Result r = RedisStorms.storm(redis.lockBackend(), "counter", counter, attempts).withTtl(TTL)
                    .withStallProbability(Math.min(0.25, 12.0 / attempts)).build().run();
            System.out.println("STORM redis, tombstones expiring beside it: " + r.summary() + " side writes applied=" + side.applied.get()
                    + " refused below the horizon=" + side.belowHorizon.get() + " refused by a newer fence=" + side.newer.get()
                    + " side-stale-applied=" + side.staleApplied.get());
            r.requireSafe();
            assertThat(r.stalls()).isPositive();
            assertThat(side.staleApplied.get()).as("side writes applied below a fence their key had recorded").isZero();
            assertThat(side.applied.get()).as("side writes applied").isPositive();

            // Once Redis's clock is past the expiry of the highest fence written, no side key is a tombstone.
            long highest = side.recorded.values().stream().mapToLong(AtomicLong::get).max().orElseThrow();
            long expiry = ClockFloor.EPOCH_MILLIS + highest / ClockFloor.PER_MILLISECOND + 1 + HORIZON.toMillis();
            long give = System.nanoTime() + Duration.ofMinutes(1).toNanos();
            while (serverMillis(admin) <= expiry) {
                assertThat(System.nanoTime()).as("Redis's clock never passed %d ms", expiry).isLessThan(give);
            }
            List<String> tombstones = new ArrayList<>();
            for (String k : side.recorded.keySet()) {
                if (admin.exists(k) == 0 && admin.exists(w.fenceKeyOf(k)) == 1) {
                    tombstones.add(k);
                }
            }
            assertThat(tombstones).as("side tombstones left after their expiry").isEmpty();
            assertThat(Long.parseLong(admin.get(prefix + "counter"))).isEqualTo(r.finalValue());
        } finally {
            RedisSupport.deleteKeys(prefix);
        }
    }

    private static long serverMillis(RedisCommands<String, String> admin) {
        List<String> t = admin.time();
        return Long.parseLong(t.get(0)) * 1000 + Long.parseLong(t.get(1)) / 1000;
    }

    /**
     * The side keys: a claim deletes {@code side:<fence mod 256>} with its fence, a write re-creates it
     * first. A side write is stale if its key had recorded a higher fence before the write started (so the
     * check has no false alarm: that fence was recorded first).
     */
    static final class SideKeys {
        final FencedRedis w;
        final String prefix;
        final ConcurrentHashMap<String, AtomicLong> recorded = new ConcurrentHashMap<>();
        final AtomicLong applied = new AtomicLong();
        final AtomicLong belowHorizon = new AtomicLong();
        final AtomicLong newer = new AtomicLong();
        final AtomicLong staleApplied = new AtomicLong();

        SideKeys(FencedRedis w, String prefix) {
            this.w = w;
            this.prefix = prefix;
        }

        private String key(FenceToken fence) {
            return prefix + Math.floorMod(fence.value(), SIDE_KEYS);
        }

        private AtomicLong seen(String key) {
            return recorded.computeIfAbsent(key, k -> new AtomicLong());
        }

        void delete(FenceToken fence) {
            String k = key(fence);
            if (w.delete(k, fence) instanceof WriteOutcome.Applied) {
                seen(k).accumulateAndGet(fence.value(), Math::max);
            }
        }

        void recreate(FenceToken fence) {
            String k = key(fence);
            long before = seen(k).get();
            switch (w.set(k, fence, "1")) {
                case WriteOutcome.Applied a -> {
                    applied.incrementAndGet();
                    if (fence.value() < before) {
                        staleApplied.incrementAndGet();
                    }
                    seen(k).accumulateAndGet(fence.value(), Math::max);
                }
                case WriteOutcome.Stale s -> (s.reason() == WriteOutcome.Stale.Reason.BELOW_HORIZON ? belowHorizon : newer).incrementAndGet();
                case WriteOutcome.NotFound n -> throw new AssertionError("a set answered NotFound: " + n);
            }
        }

        /** {@code counter}, each claim and write with its side key first. */
        ZombieStorm.FencedCounter around(ZombieStorm.FencedCounter counter) {
            return new ZombieStorm.FencedCounter() {
                @Override
                public WriteOutcome claim(FenceToken fence) throws Exception {
                    delete(fence);
                    return counter.claim(fence);
                }

                @Override
                public long read() throws Exception {
                    return counter.read();
                }

                @Override
                public WriteOutcome write(long value, FenceToken fence) throws Exception {
                    recreate(fence);
                    return counter.write(value, fence);
                }
            };
        }
    }
}
