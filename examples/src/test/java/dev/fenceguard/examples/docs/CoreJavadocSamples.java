package dev.fenceguard.examples.docs;

import dev.fenceguard.core.AsyncLockClient;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockContext;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.idempotency.AsyncIdempotencyStore;
import dev.fenceguard.core.idempotency.Fingerprint;
import dev.fenceguard.core.idempotency.IdempotencyKey;
import dev.fenceguard.core.idempotency.IdempotencyKey.Profile;
import dev.fenceguard.core.idempotency.IdempotencyResult;
import dev.fenceguard.core.idempotency.IdempotencyStore;
import dev.fenceguard.core.leader.AsyncLeaderElection;
import dev.fenceguard.core.leader.LeaderElection;
import dev.fenceguard.core.micrometer.MicrometerLockObservations;
import dev.fenceguard.core.idempotency.ResultCodec;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.redis.FencedRedis;
import io.micrometer.observation.ObservationRegistry;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The samples in the Javadoc of fence-guard-core. Those that write {@code orders} write the row 42 of
 * {@code public.orders} on the embedded PostgreSQL (as docs/postgresql.md's samples do), under leases of
 * its lock table in {@code public}, so that every fence that reaches the row comes from one lock key's table.
 */
final class CoreJavadocSamples {

    private static final Logger log = LoggerFactory.getLogger(CoreJavadocSamples.class);

    private final DataSource dataSource;
    private final FencedTable orders;

    CoreJavadocSamples(DataSource dataSource, FencedTable orders) {
        this.dataSource = dataSource;
        this.orders = orders;
    }

    /** Thrown by the WriteOutcome sample when the order has no row. */
    static final class OrderMissing extends RuntimeException {
        private static final long serialVersionUID = 1L;

        OrderMissing() {
            super("order 42 has no row");
        }
    }

    /** A stand-in for a payment provider: one charge per idempotency key, as real providers do. */
    static final class Gateway {
        final Map<String, String> charges = new ConcurrentHashMap<>();
        final AtomicInteger calls = new AtomicInteger();

        String charge(String idempotencyKey, String amount) {
            calls.incrementAndGet();
            return charges.computeIfAbsent(idempotencyKey, k -> "ch_" + (charges.size() + 1) + " (" + amount + ")");
        }

        CompletionStage<String> chargeAsync(String idempotencyKey, String amount) {
            return CompletableFuture.completedFuture(charge(idempotencyKey, amount));
        }
    }

    CompletionStage<WriteOutcome> asyncLockClient(LockBackend backend, FencedRedis redis, String orderId) {
        // dev/fenceguard/core/AsyncLockClient.java: async face (begin)
        AsyncLockClient locks = LockClient.builder(backend).build().async();
        CompletionStage<WriteOutcome> paid = locks.withLock("orders:" + orderId, Duration.ofSeconds(30), Duration.ofSeconds(5),
                        lease -> redis.async().set("order:" + orderId + ":status", lease.fence(), "paid"))
                .thenApply(outcome -> outcome.orElseThrow().orThrow());   // empty: not had within 5 s; Stale: refused
        // dev/fenceguard/core/AsyncLockClient.java: async face (end)
        return paid;
    }

    void lease(LockClient client) throws InterruptedException {
        // dev/fenceguard/core/Lease.java: try with resources (begin)
        try (Lease lease = client.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow()) {
            orders.on(dataSource).update(42L, lease.fence(), Assignments.of("status", "paid")).orThrow(); // the resource checks the fence
        }
        // dev/fenceguard/core/Lease.java: try with resources (end)
    }

    void lockClient() throws InterruptedException {
        // dev/fenceguard/core/LockClient.java: with lock (begin)
        LockClient locks = LockClient.builder(FenceGuardJdbc.builder(dataSource).build().lockBackend()).build();
        locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease ->
                orders.on(dataSource).update(42L, lease.fence(), Assignments.of("status", "paid")).orThrow());
        // dev/fenceguard/core/LockClient.java: with lock (end)
    }

    // dev/fenceguard/core/LockContext.java: require held (begin)
    void shipOrder(long id) {
        Lease lease = LockContext.requireHeld("orders:" + id);   // throws outside withLock("orders:<id>")
        orders.on(dataSource).update(id, lease.fence(), Assignments.of("status", "shipped")).orThrow();
    }
    // dev/fenceguard/core/LockContext.java: require held (end)

    void writeOutcome(Lease lease) {
        // dev/fenceguard/core/WriteOutcome.java: switch (begin)
        switch (orders.on(dataSource).update(42L, lease.fence(), Assignments.of("status", "paid"))) {
            case WriteOutcome.Applied a -> log.info("saved");
            case WriteOutcome.Stale s -> log.warn("zombie write refused: {}", s);
            case WriteOutcome.NotFound n -> throw new OrderMissing();
        }
        // dev/fenceguard/core/WriteOutcome.java: switch (end)
    }

    static CompletionStage<String> asyncIdempotencyStore(IdempotencyBackend idempotencyBackend, String key, String orderId, String amount,
            Lease lease, Gateway gateway) {
        // dev/fenceguard/core/idempotency/AsyncIdempotencyStore.java: async call (begin)
        AsyncIdempotencyStore charges = IdempotencyStore.builder(idempotencyBackend).build().async();
        CompletionStage<String> chargeId = charges.call(key, Fingerprint.ofParts(orderId, amount), lease, ResultCodec.utf8(),
                        () -> gateway.chargeAsync(key, amount))                  // runs at most once per key, fenced
                .thenApply(charge -> charge.result().orElseThrow());
        // dev/fenceguard/core/idempotency/AsyncIdempotencyStore.java: async call (end)
        return chargeId;
    }

    static Fingerprint fingerprint(String orderId, long amountCents, String currency) {
        // dev/fenceguard/core/idempotency/Fingerprint.java: of parts (begin)
        Fingerprint fp = Fingerprint.ofParts("charge", orderId, Long.toString(amountCents), currency);
        // dev/fenceguard/core/idempotency/Fingerprint.java: of parts (end)
        return fp;
    }

    static HttpRequest idempotencyKey(String orderId, String form) {
        // dev/fenceguard/core/idempotency/IdempotencyKey.java: stripe key (begin)
        String key = IdempotencyKey.builder(IdempotencyKey.Profile.STRIPE)
                .scope("shop").id(orderId).operation("charge").build();
        HttpRequest charge = HttpRequest.newBuilder(URI.create("https://api.stripe.com/v1/charges"))
                .header("Idempotency-Key", key)                 // the same key on every retry, from any process
                .POST(HttpRequest.BodyPublishers.ofString(form)).build();
        // dev/fenceguard/core/idempotency/IdempotencyKey.java: stripe key (end)
        return charge;
    }

    static void idempotencyStore(IdempotencyBackend idempotencyBackend, LockClient locks, String orderId, String amount, Gateway gateway)
            throws Exception {
        // dev/fenceguard/core/idempotency/IdempotencyStore.java: call under a lock (begin)
        IdempotencyStore charges = IdempotencyStore.builder(idempotencyBackend).withRetention(Duration.ofDays(1)).build();
        locks.withLock("order:" + orderId, Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> {
            String key = IdempotencyKey.builder(Profile.STRIPE).scope("shop").id(orderId).operation("charge").build();
            IdempotencyResult<String> charge = charges.call(key, Fingerprint.ofParts(orderId, amount), lease,
                    ResultCodec.utf8(), () -> gateway.charge(key, amount));      // runs at most once per key, fenced
            return charge.result().orElseThrow();
        });
        // dev/fenceguard/core/idempotency/IdempotencyStore.java: call under a lock (end)
    }

    static AsyncLeaderElection asyncLeaderElection(LockClient lockClient) {
        // dev/fenceguard/core/leader/AsyncLeaderElection.java: start and stop (begin)
        AsyncLeaderElection election = LeaderElection.builder(lockClient, "billing-scheduler").build().async();
        election.start();                                       // campaigns in the background, returns at once
        // ... at shutdown:
        CompletionStage<Void> stopped = election.stop().thenRun(() -> log.info("no longer campaigning"));
        // dev/fenceguard/core/leader/AsyncLeaderElection.java: start and stop (end)
        stopped.toCompletableFuture().join();
        return election;
    }

    record Observed(LockClient locks, FencedTable orders) {}

    static Observed micrometerLockObservations(ObservationRegistry observationRegistry, LockBackend backend) {
        // dev/fenceguard/core/micrometer/MicrometerLockObservations.java: observations (begin)
        LockObservations observations = MicrometerLockObservations.of(observationRegistry);
        LockClient locks = LockClient.builder(backend).withObservations(observations).build();
        FencedTable orders = FencedTable.builder("public", "orders", "id", "fence_token").withObservations(observations).build();
        // dev/fenceguard/core/micrometer/MicrometerLockObservations.java: observations (end)
        return new Observed(locks, orders);
    }
}
