package dev.fenceguard.examples;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.idempotency.IdempotencyMetrics;
import dev.fenceguard.core.idempotency.IdempotencyStore;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.LockBackend;

/**
 * Where the demo keeps its lock and its order: PostgreSQL, Redis or Firestore. The lock client and the
 * idempotency store are built here, the same way for every store (no meters: the demo prints what
 * happens); a subclass gives the backends of its store and the order's plain and fenced writes.
 */
abstract class OrderStore implements AutoCloseable {

    private final String description;
    private final LockClient locks;
    private final IdempotencyStore charges;

    OrderStore(String description, LockBackend lockBackend, IdempotencyBackend idempotencyBackend) {
        this.description = description;
        this.locks = LockClient.builder(lockBackend).withMetrics(LockMetrics.none()).build();
        this.charges = IdempotencyStore.builder(idempotencyBackend).withMetrics(IdempotencyMetrics.none()).build();
    }

    /** A short description for the output, e.g. "PostgreSQL 18.1 (embedded)". */
    final String describe() {
        return description;
    }

    final LockClient locks() {
        return locks;
    }

    /** Where the gateway's answers are recorded, under each charge's idempotency key, in the same store. */
    final IdempotencyStore charges() {
        return charges;
    }

    abstract void createOrder(String orderId) throws Exception;

    /** Writes the order's status; with {@code fenced} false the fence is ignored, as naive code would. */
    abstract WriteOutcome writeStatus(String orderId, String status, FenceToken fence, boolean fenced) throws Exception;

    abstract String readStatus(String orderId) throws Exception;

    @Override
    public abstract void close() throws Exception;
}
