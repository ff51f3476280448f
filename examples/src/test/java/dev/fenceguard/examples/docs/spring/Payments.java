package dev.fenceguard.examples.docs.spring;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.examples.docs.spring.Outbox.Shipped;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.spring.FencedLock;
import dev.fenceguard.spring.jdbc.TransactionalFencedWrites;
import org.springframework.transaction.annotation.Transactional;

/** The samples in the Javadoc of FencedLock and TransactionalFencedWrites, in the context of EnableFencedLocks' sample. */
class Payments {

    record Receipt(long orderId, FenceToken fence) {}

    /** A stand-in for a payment provider. */
    static final class Gateway {
        Receipt charge(long orderId, FenceToken fence) {
            return new Receipt(orderId, fence);
        }
    }

    private final Gateway gateway = new Gateway();
    private final TransactionalFencedWrites writes;
    private final Outbox outbox;
    private final FencedTable orders = FencedTable.builder("public", "orders", "id", "fence_token").withKeyType(Long.class).build();

    Payments(TransactionalFencedWrites writes, Outbox outbox) {
        this.writes = writes;
        this.outbox = outbox;
    }

    // dev/fenceguard/spring/FencedLock.java: pay (begin)
    @FencedLock(key = "'orders:' + #orderId", ttl = "30s", maxWait = "5s")
    public Receipt pay(long orderId, Lease lease) {
        Receipt receipt = gateway.charge(orderId, lease.fence());
        writes.on(orders).update(orderId, lease.fence(), Assignments.of("status", "paid")).orThrow();
        return receipt;
    }
    // dev/fenceguard/spring/FencedLock.java: pay (end)

    // dev/fenceguard/spring/jdbc/TransactionalFencedWrites.java: ship in the transaction (begin)
    @FencedLock(key = "'orders:' + #id")
    @Transactional
    public void ship(long id, Lease lease) {
        writes.on(orders).update(id, lease.fence(), Assignments.of("status", "shipped")).orThrow();
        outbox.add(new Shipped(id));   // same transaction
    }
    // dev/fenceguard/spring/jdbc/TransactionalFencedWrites.java: ship in the transaction (end)
}
