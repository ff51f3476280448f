package dev.fenceguard.benchmarks;

import dev.fenceguard.core.AsyncLockClient;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;

/**
 * Issue #19 item 7: Redis acquire + release pairs through the asynchronous client
 * ({@link AsyncLockClient#tryAcquire} then {@link AsyncLockClient#release}) with N pairs in flight,
 * against the blocking {@link LockClient} on N threads, in the same run, on one shared Lettuce
 * connection and one client. Reports pairs per second and client CPU per pair (process CPU time of
 * this JVM; redis-server is another process and is not counted).
 *
 * <p>Phases of one round run back to back, rounds repeat, and each load reports its median round, as
 * {@link Harness} does; it is not reused because it has no asynchronous load and no CPU reading.
 * Server: {@link TestRedis#server()}. Arguments: {@code [seconds-per-phase=3] [rounds=5]}.
 */
public final class AsyncRedisBenchmark {

    private static final Duration TTL = Duration.ofSeconds(30);
    /** Keys each thread or pipeline slot cycles through, as in {@link RedisBenchmark}. */
    private static final int KEYS_PER_SLOT = 250;

    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    /** A way to keep acquire + release pairs going for a while; returns how many completed. */
    private interface Load {
        long run(long nanos) throws Exception;
    }

    /** One timed phase: throughput and this process's CPU time per completed pair. */
    private record Phase(double pairsPerSecond, double cpuMicrosPerPair) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%,.0f/s %.1f us CPU/pair", pairsPerSecond, cpuMicrosPerPair);
        }
    }

    private AsyncRedisBenchmark() {}

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        long nanos = (long) (seconds * 1e9);
        TestRedis server = TestRedis.server();
        String prefix = TestRedis.keyPrefix("bench-async");
        RedisClient redisClient = RedisClient.create(RedisURI.create(server.uri()));
        try (StatefulRedisConnection<String, String> conn = redisClient.connect();
                FenceGuardRedis fenceGuard = FenceGuardRedis.builder(conn).withKeyPrefix(prefix)
                        .withFenceKeyPrefix(prefix + "fence:").withMetrics(LockMetrics.none()).build()) {
            RedisCommands<String, String> redis = conn.sync();
            LockClient locks = LockClient.builder(fenceGuard.lockBackend()).withMetrics(LockMetrics.none()).build();
            AsyncLockClient async = locks.async();
            System.out.printf(Locale.ROOT, "Redis %s (%s), one shared Lettuce connection, %d cores, %.1f s per phase, "
                    + "%d rounds, phases in the order listed%n%n", redisVersion(redis), server.origin(),
                    Runtime.getRuntime().availableProcessors(), seconds, rounds);

            Map<String, Load> loads = new LinkedHashMap<>();
            loads.put("async, 8 in flight", pipeline(async, 8));
            loads.put("blocking, 8 platform threads", threads(locks, 8, Thread.ofPlatform().factory()));
            loads.put("async, 64 in flight", pipeline(async, 64));
            loads.put("blocking, 64 platform threads", threads(locks, 64, Thread.ofPlatform().factory()));
            loads.put("blocking, 64 virtual threads", threads(locks, 64, Thread.ofVirtual().factory()));

            for (Map.Entry<String, Load> load : loads.entrySet()) { // warm-up, not reported
                measure(load.getValue(), nanos);
            }
            Map<String, List<Phase>> results = new LinkedHashMap<>();
            for (int r = 1; r <= rounds; r++) {
                for (Map.Entry<String, Load> load : loads.entrySet()) {
                    Phase phase = measure(load.getValue(), nanos);
                    results.computeIfAbsent(load.getKey(), k -> new ArrayList<>()).add(phase);
                    System.out.printf(Locale.ROOT, "round %d  %-30s %s%n", r, load.getKey(), phase);
                }
            }

            System.out.printf(Locale.ROOT, "%nmedians of %d rounds (each figure its own median)%n", rounds);
            Map<String, Phase> medians = new LinkedHashMap<>();
            results.forEach((name, phases) -> {
                Phase median = new Phase(median(phases, Phase::pairsPerSecond), median(phases, Phase::cpuMicrosPerPair));
                medians.put(name, median);
                System.out.printf(Locale.ROOT, "  %-30s %s%n", name, median);
            });
            System.out.println();
            compare(medians, "async, 8 in flight", "blocking, 8 platform threads");
            compare(medians, "async, 64 in flight", "blocking, 64 platform threads");
            compare(medians, "async, 64 in flight", "blocking, 64 virtual threads");
            RedisBenchmark.deleteAll(redis, prefix);
        } finally {
            redisClient.shutdown();
        }
    }

    /**
     * N pairs in flight on the asynchronous client: one submitting thread takes a free slot (a permit
     * that carries the slot's number, so no two pairs in flight share a key), starts the pair, and the
     * pair's completion, on Lettuce's I/O thread, hands the slot back.
     */
    private static Load pipeline(AsyncLockClient async, int inFlight) {
        return nanos -> {
            BlockingQueue<Integer> free = new ArrayBlockingQueue<>(inFlight);
            for (int slot = 0; slot < inFlight; slot++) {
                free.add(slot);
            }
            LongAdder done = new LongAdder();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            long deadline = System.nanoTime() + nanos;
            for (long i = 0; System.nanoTime() < deadline && failure.get() == null; i++) {
                int slot = free.take();
                async.tryAcquire("async:" + slot + ":" + (i % KEYS_PER_SLOT), TTL)
                        .thenCompose(lease -> async.release(lease.orElseThrow(() -> new IllegalStateException("key was held"))))
                        .whenComplete((released, error) -> {
                            if (error != null || !released) {
                                failure.compareAndSet(null, error != null ? error : new IllegalStateException("release failed"));
                            } else {
                                done.increment();
                            }
                            free.add(slot);
                        });
            }
            for (int drained = 0; drained < inFlight; drained++) { // the pairs still in flight count too
                if (free.poll(30, TimeUnit.SECONDS) == null) {
                    throw new IllegalStateException("pairs still in flight after 30 s");
                }
            }
            if (failure.get() != null) {
                throw new IllegalStateException("an asynchronous pair failed", failure.get());
            }
            return done.sum();
        };
    }

    /** N threads, each running blocking pairs back to back on keys of its own. */
    private static Load threads(LockClient locks, int count, ThreadFactory factory) {
        return nanos -> {
            LongAdder done = new LongAdder();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> workers = new ArrayList<>();
            long[] deadline = new long[1];
            for (int t = 0; t < count; t++) {
                int thread = t;
                Thread worker = factory.newThread(() -> {
                    try {
                        start.await();
                        for (long i = 0; System.nanoTime() < deadline[0]; i++) {
                            Lease lease = locks.tryAcquire("blocking:" + thread + ":" + (i % KEYS_PER_SLOT), TTL)
                                    .orElseThrow(() -> new IllegalStateException("key was held"));
                            if (!locks.release(lease)) {
                                throw new IllegalStateException("release failed");
                            }
                            done.increment();
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                worker.start();
                workers.add(worker);
            }
            deadline[0] = System.nanoTime() + nanos; // published to the workers by the latch
            start.countDown();
            for (Thread worker : workers) {
                worker.join();
            }
            if (failure.get() != null) {
                throw new IllegalStateException("a blocking pair failed", failure.get());
            }
            return done.sum();
        };
    }

    private static Phase measure(Load load, long nanos) throws Exception {
        long cpu0 = OS.getProcessCpuTime();
        long t0 = System.nanoTime();
        long pairs = load.run(nanos);
        double elapsed = (System.nanoTime() - t0) / 1e9;
        long cpu = OS.getProcessCpuTime() - cpu0;
        return new Phase(pairs / elapsed, cpu / 1e3 / pairs);
    }

    private static void compare(Map<String, Phase> medians, String asyncName, String blockingName) {
        Phase a = medians.get(asyncName);
        Phase b = medians.get(blockingName);
        double speed = a.pairsPerSecond() / b.pairsPerSecond();
        double cpu = a.cpuMicrosPerPair() / b.cpuMicrosPerPair();
        System.out.printf(Locale.ROOT, "%s vs %s: pairs/s %.2fx (target >= 1.0x: %s), CPU/pair %.2fx (target <= 1.0x: %s)%n",
                asyncName, blockingName, speed, speed >= 1.0 ? "MET" : "MISSED", cpu, cpu <= 1.0 ? "MET" : "MISSED");
    }

    private static double median(List<Phase> phases, ToDoubleFunction<Phase> figure) {
        double[] sorted = phases.stream().mapToDouble(figure).sorted().toArray();
        return sorted[sorted.length / 2];
    }

    private static String redisVersion(RedisCommands<String, String> redis) {
        return redis.info("server").lines().filter(l -> l.startsWith("redis_version:")).findFirst().orElse("?:?").split(":")[1];
    }
}
