package dev.fenceguard.examples.boot;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.idempotency.IdempotencyKey;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.spring.FencedLock;
import dev.fenceguard.spring.jdbc.TransactionalFencedWrites;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Pays an order: under the order's lock, then in a transaction, with the lease's fence on the write. */
@Service
public class PaymentService {

    private final PaymentGateway gateway;
    private final TransactionalFencedWrites writes;
    private final FencedTable orders;
    private final Pause pause;

    PaymentService(PaymentGateway gateway, TransactionalFencedWrites writes, FencedTable orders, ObjectProvider<Pause> pause) {
        this.gateway = gateway;
        this.writes = writes;
        this.orders = orders;
        this.pause = pause.getIfAvailable(() -> Pause.NONE);
    }

    /** What a payment did. */
    public record Receipt(String orderId, String worker, String charge, long fence) {}

    /**
     * @throws dev.fenceguard.core.StaleFenceException if a newer lease has written the order meanwhile
     *     (this worker is a zombie); the transaction rolls back and the card was not charged twice
     */
    @FencedLock(key = "'orders:' + #orderId")
    @Transactional
    public Receipt pay(String orderId, String worker, long amountCents, Lease lease) throws InterruptedException {
        pause.afterLocked(orderId, worker);
        // The key names the operation, never the lease: a zombie and its successor send the same key.
        String key = IdempotencyKey.builder(IdempotencyKey.Profile.STRIPE).scope("orders").id(orderId).operation("charge").build();
        String charge = gateway.charge(key, amountCents);
        writes.on(orders).upsert(orderId, lease.fence(), Assignments.of("status", "paid by " + worker + " (" + charge + ")")).orThrow();
        return new Receipt(orderId, worker, charge, lease.fence().value());
    }
}
