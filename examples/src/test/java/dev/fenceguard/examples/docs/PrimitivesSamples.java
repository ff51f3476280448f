package dev.fenceguard.examples.docs;

import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.idempotency.Fingerprint;
import dev.fenceguard.core.idempotency.IdempotencyKey;
import dev.fenceguard.core.idempotency.IdempotencyKey.Profile;
import dev.fenceguard.core.idempotency.IdempotencyResult;
import dev.fenceguard.core.idempotency.IdempotencyStore;
import dev.fenceguard.core.idempotency.ResultCodec;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.migrations.FenceGuardMigrations;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * The sample of docs/idempotency-store.md. Its table go to the {@code public}
 * schema, as the documents say, so they run on a PostgreSQL of their own (the testkit's embedded one).
 */
final class PrimitivesSamples {

    private PrimitivesSamples() {}

    /** A stand-in for a payment provider: one charge per idempotency key, as real providers do. */
    static final class Gateway {
        final java.util.Map<String, String> charges = new java.util.concurrent.ConcurrentHashMap<>();

        String charge(String idempotencyKey, long amountCents) {
            return charges.computeIfAbsent(idempotencyKey, k -> "ch_" + (charges.size() + 1) + " (" + amountCents + ")");
        }
    }

    static void payOrder(LockClient locks, DataSource dataSource, DataSource ds, FencedTable orders, Gateway gateway, String orderId)
            throws Exception {
        // docs/idempotency-store.md: usage (begin)
        FenceGuardMigrations.idempotencyBuilder(dataSource).migrate();        // PostgreSQL: public.fence_guard_idempotency
        IdempotencyStore charges = IdempotencyStore.builder(FenceGuardJdbc.builder(dataSource).build().idempotencyBackend())
                .withRetention(Duration.ofDays(1))                            // match the provider's window
                .build();
        // or: FenceGuardRedis.idempotencyBackend(), FenceGuardFirestore.idempotencyBackend(), new InMemoryIdempotencyBackend()

        locks.withLock("order:" + orderId, Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> {
            String key = IdempotencyKey.builder(Profile.STRIPE).scope("shop").id(orderId).operation("charge").build();
            IdempotencyResult<String> charge = charges.call(key, Fingerprint.ofParts(orderId, "4200", "EUR"), lease,
                    ResultCodec.utf8(), () -> gateway.charge(key, 4200));
            return orders.on(ds).update(orderId, lease.fence(), Assignments.of("status", "paid").and("charge", charge.result().orElseThrow()))
                    .orThrow();
        });
        // docs/idempotency-store.md: usage (end)
    }
}
