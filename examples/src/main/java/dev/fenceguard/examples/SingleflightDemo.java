package dev.fenceguard.examples;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.singleflight.ResultCodec;
import dev.fenceguard.core.singleflight.Singleflight;
import dev.fenceguard.core.singleflight.SingleflightMetrics;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.testkit.PausableBackend;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Singleflight on Redis, told as the zombie story. Three service nodes cache the day's exchange rates;
 * when the cache runs out, twelve requests (four per node) ask for the rates at once: one node calls
 * the slow rate provider, the others wait for its result. Then the zombie: a node starts computing,
 * stalls past its lease (a long GC pause), another node starts a newer flight and publishes fresh
 * rates; the stalled node wakes and publishes its stale rates: the store refuses them, and its callers
 * get the fresh ones.
 *
 * <p>Redis comes from {@code --redis redis://HOST:PORT}, else the test-server harness. Exits 1 if the
 * provider was called more than once for the twelve requests or the stale rates were published.
 */
public final class SingleflightDemo {

    public static void main(String[] args) throws Exception {
        Quiet.apply();
        System.exit(run(args, System.out));
    }

    /** One service node: in production its own process, with its own connections. */
    private record Node(String name, FenceGuardRedis redis, PausableBackend link, Singleflight flights) {}

    public static int run(String[] args, PrintStream out) throws Exception {
        String uri = args.length == 2 && args[0].equals("--redis") ? args[1] : TestRedis.server().uri().toString();
        String prefix = "fence-guard-sf-demo:" + UUID.randomUUID().toString().substring(0, 8) + ":";
        RedisClient client = RedisClient.create(uri);
        List<Node> nodes = new ArrayList<>();
        try {
            for (String name : List.of("node-a", "node-b", "node-c")) {
                FenceGuardRedis redis = FenceGuardRedis.builder(client).withKeyPrefix(prefix + "lock:")
                        .withFenceKeyPrefix(prefix + "fence:").withFlightKeyPrefix(prefix + "sf:").withMetrics(LockMetrics.none()).build();
                PausableBackend link = new PausableBackend(redis.lockBackend());
                LockClient lockClient = LockClient.builder(link).withMetrics(LockMetrics.none()).build();
                nodes.add(new Node(name, redis, link, Singleflight.builder(lockClient, redis.flightStore())
                        .withMetrics(SingleflightMetrics.none()).build()));
            }
            out.println("singleflight demo on Redis at " + uri + ": three nodes, one slow rate provider");

            AtomicInteger providerCalls = new AtomicInteger();
            CountDownLatch called = new CountDownLatch(1);
            CompletableFuture<String> provider = new CompletableFuture<>();
            List<CompletableFuture<String>> requests = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                for (Node n : nodes) {
                    requests.add(n.flights().async().run("rates:2026-11-23", Duration.ofSeconds(5), ResultCodec.utf8(), lease -> {
                        providerCalls.incrementAndGet();
                        called.countDown();
                        return provider; // the provider answers when the demo says so
                    }).toCompletableFuture());
                }
            }
            if (!called.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no node called the provider within 60 s");
            }
            provider.complete("EUR/USD 1.0842");
            for (CompletableFuture<String> r : requests) {
                r.get(60, TimeUnit.SECONDS);
            }
            out.println("12 requests on 3 nodes got '" + requests.get(11).join() + "'; the provider was called "
                    + providerCalls.get() + " time(s)");

            Node zombie = nodes.get(0);
            Node fresh = nodes.get(1);
            CompletableFuture<String> stalled = new CompletableFuture<>();
            CompletableFuture<Lease> zombieLease = new CompletableFuture<>();
            CompletableFuture<String> zombieCaller = zombie.flights().async().run("rates:2026-11-24", Duration.ofSeconds(1),
                    ResultCodec.utf8(), lease -> {
                        zombie.link().pause(); // the GC pause starts while it computes: no renewals
                        zombieLease.complete(lease);
                        return stalled;
                    }).toCompletableFuture();
            Lease old = zombieLease.get(60, TimeUnit.SECONDS);
            out.println(zombie.name() + " computes tomorrow's rates under fence " + old.fence().value() + " and stalls");
            old.whenLost().toCompletableFuture().get(60, TimeUnit.SECONDS);
            CompletableFuture<Long> freshFence = new CompletableFuture<>();
            String freshRates = fresh.flights().run("rates:2026-11-24", Duration.ofSeconds(5), ResultCodec.utf8(), lease -> {
                freshFence.complete(lease.fence().value());
                return "EUR/USD 1.0857 (fresh)";
            });
            out.println(fresh.name() + " finds the lease expired, computes under fence " + freshFence.join() + " and publishes '"
                    + freshRates + "'");
            zombie.link().resume();
            stalled.complete("EUR/USD 1.0799 (stale)");
            String zombieGot = zombieCaller.get(60, TimeUnit.SECONDS);
            out.println(zombie.name() + " wakes and publishes its stale rates under fence " + old.fence().value()
                    + ": " + (zombieGot.equals(freshRates) ? "refused" : "APPLIED") + "; its caller gets '" + zombieGot + "'");
            boolean ok = providerCalls.get() == 1 && zombieGot.equals(freshRates);
            out.println(ok ? "OK: computed once for twelve requests, and the zombie's stale rates never reached a caller" : "WRONG");
            return ok ? 0 : 1;
        } finally {
            for (Node n : nodes) {
                n.link().resume();
                n.redis().close();
            }
            try (StatefulRedisConnection<String, String> c = client.connect()) {
                List<String> keys = c.sync().keys(prefix + "*");
                if (!keys.isEmpty()) {
                    c.sync().del(keys.toArray(String[]::new));
                }
            }
            client.shutdown();
        }
    }
}
