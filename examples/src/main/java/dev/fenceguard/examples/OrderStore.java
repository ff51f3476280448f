package dev.fenceguard.examples;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.idempotency.IdempotencyStore;

/** Where the demo keeps its lock and its order: PostgreSQL, Redis or Firestore. */
interface OrderStore extends AutoCloseable {

    /** A short description for the output, e.g. "PostgreSQL 18.1 (embedded)". */
    String describe();

    LockClient locks();

    /** Where the gateway's answers are recorded, under each charge's idempotency key, in the same store. */
    IdempotencyStore charges();

    void createOrder(String orderId) throws Exception;

    /** Writes the order's status; with {@code fenced} false the fence is ignored, as naive code would. */
    WriteOutcome writeStatus(String orderId, String status, FenceToken fence, boolean fenced) throws Exception;

    String readStatus(String orderId) throws Exception;

    @Override
    void close() throws Exception;
}
