package dev.fenceguard.benchmarks;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.singleflight.ResultCodec;
import dev.fenceguard.core.singleflight.Singleflight;
import dev.fenceguard.core.singleflight.SingleflightMetrics;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.redis.RedisFlightStore;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Singleflight on Redis (issue #11 part 3) against the simplest correct baseline, in the same run: a
 * burst of callers (P simulated processes with C concurrent callers each) asks for one fresh key whose
 * computation takes W ms. The time from the first call to the last answer is measured, bursts of the
 * two sides alternating.
 * <ul>
 *   <li>fence-guard: {@link Singleflight} per process over the {@link RedisFlightStore} of its own
 *       {@link FenceGuardRedis} (waiters woken by pub/sub);
 *   <li>baseline: cache-aside under the same lock client, double-checked: {@code GET} the cache; on a miss
 *       {@code withLock} (waiting with the lock client's backoff), {@code GET} again, compute, {@code SET}.
 * </ul>
 * Both compute once per burst (checked). Arguments: {@code [bursts=20] [processes=3] [callers=8] [work-ms=20]}.
 */
public final class SingleflightBenchmark {

    public static void main(String[] args) throws Exception {
        int bursts = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int processes = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int callers = args.length > 2 ? Integer.parseInt(args[2]) : 8;
        long workMillis = args.length > 3 ? Long.parseLong(args[3]) : 20;
        TestRedis server = TestRedis.server();
        String prefix = TestRedis.keyPrefix("sfbench");
        RedisClient client = RedisClient.create(RedisURI.create(server.uri()));
        List<FenceGuardRedis> stores = new ArrayList<>();
        try (StatefulRedisConnection<String, String> conn = client.connect();
                FenceGuardRedis fenceGuard = FenceGuardRedis.builder(client).withKeyPrefix(prefix + "lock:")
                        .withFenceKeyPrefix(prefix + "fence:").withMetrics(LockMetrics.none()).build()) {
            RedisCommands<String, String> redis = conn.sync();
            List<LockClient> locks = new ArrayList<>();
            List<Singleflight> flights = new ArrayList<>();
            for (int p = 0; p < processes; p++) {
                LockClient lc = LockClient.builder(fenceGuard.lockBackend()).withMetrics(LockMetrics.none()).build();
                FenceGuardRedis process = FenceGuardRedis.builder(client).withKeyPrefix(prefix + "lock:")
                        .withFenceKeyPrefix(prefix + "fence:").withFlightKeyPrefix(prefix + "sf:").withMetrics(LockMetrics.none()).build();
                stores.add(process);
                locks.add(lc);
                flights.add(Singleflight.builder(lc, process.flightStore()).withMetrics(SingleflightMetrics.none()).build());
            }
            System.out.printf(Locale.ROOT, "Redis %s (%s), %d bursts per side, %d processes x %d callers, work %d ms%n%n",
                    redis.info("server").lines().filter(l -> l.startsWith("redis_version:")).findFirst().orElse("?").substring(14),
                    server.origin(), bursts, processes, callers, workMillis);

            AtomicInteger computed = new AtomicInteger();
            Duration ttl = Duration.ofSeconds(10);
            Burst singleflight = key -> {
                List<CompletableFuture<String>> answers = new ArrayList<>();
                for (int c = 0; c < callers; c++) {
                    for (Singleflight f : flights) {
                        answers.add(f.async().run(key, ttl, ResultCodec.utf8(), lease -> CompletableFuture.supplyAsync(
                                () -> compute(computed, workMillis), r -> Thread.ofVirtual().start(r)))
                                .toCompletableFuture());
                    }
                }
                CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            };
            SetArgs keep = SetArgs.Builder.px(10_000);
            Burst cacheAside = key -> {
                String cacheKey = prefix + "cache:" + key;
                CountDownLatch done = new CountDownLatch(processes * callers);
                List<Thread> threads = new ArrayList<>();
                Exception[] failure = new Exception[1];
                for (int c = 0; c < callers; c++) {
                    for (LockClient lc : locks) {
                        threads.add(Thread.ofVirtual().start(() -> {
                            try {
                                if (redis.get(cacheKey) == null) {
                                    Optional<String> v = lc.withLock(key, ttl, Duration.ofSeconds(60), lease -> {
                                        String cached = redis.get(cacheKey);
                                        if (cached != null) {
                                            return cached;
                                        }
                                        String fresh = compute(computed, workMillis);
                                        redis.set(cacheKey, fresh, keep);
                                        return fresh;
                                    });
                                    v.orElseThrow();
                                }
                            } catch (Exception e) {
                                synchronized (failure) {
                                    failure[0] = e;
                                }
                            } finally {
                                done.countDown();
                            }
                        }));
                    }
                }
                if (!done.await(60, TimeUnit.SECONDS) || failure[0] != null) {
                    throw new IllegalStateException("baseline burst failed", failure[0]);
                }
            };

            run(singleflight, "warm-sf", computed);
            run(cacheAside, "warm-ca", computed);
            long[] a = new long[bursts];
            long[] b = new long[bursts];
            for (int i = 0; i < bursts; i++) {
                a[i] = run(singleflight, "sf-" + i, computed);
                b[i] = run(cacheAside, "ca-" + i, computed);
            }
            Arrays.sort(a);
            Arrays.sort(b);
            long ma = a[bursts / 2];
            long mb = b[bursts / 2];
            System.out.printf(Locale.ROOT, "burst of %d callers, first call to last answer (median of %d): singleflight %.1f ms, "
                    + "cache-aside under the lock %.1f ms: %.2fx the baseline's time (p90 %.1f ms vs %.1f ms)%n",
                    processes * callers, bursts, ma / 1e6, mb / 1e6, (double) ma / mb, a[bursts * 9 / 10] / 1e6, b[bursts * 9 / 10] / 1e6);
        } finally {
            stores.forEach(FenceGuardRedis::close);
            try (StatefulRedisConnection<String, String> c = client.connect()) {
                ScanCursor cursor = ScanCursor.INITIAL;
                do {
                    KeyScanCursor<String> page = c.sync().scan(cursor, ScanArgs.Builder.matches(prefix + "*").limit(500));
                    if (!page.getKeys().isEmpty()) {
                        c.sync().del(page.getKeys().toArray(String[]::new));
                    }
                    cursor = page;
                } while (!cursor.isFinished());
            }
            client.shutdown();
        }
    }

    private interface Burst {
        void run(String key) throws Exception;
    }

    /** One burst on a fresh key; its wall time in ns. Fails unless the burst computed exactly once. */
    private static long run(Burst burst, String key, AtomicInteger computed) throws Exception {
        int before = computed.get();
        long t0 = System.nanoTime();
        burst.run(key);
        long t = System.nanoTime() - t0;
        if (computed.get() - before != 1) {
            throw new IllegalStateException("burst " + key + " computed " + (computed.get() - before) + " times");
        }
        return t;
    }

    private static String compute(AtomicInteger computed, long workMillis) {
        computed.incrementAndGet();
        try {
            Thread.sleep(workMillis); // the expensive call being deduplicated
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return "value";
    }
}
