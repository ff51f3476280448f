package dev.fenceguard.examples.docs.spring;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.examples.docs.spring.Outbox.Shipped;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.spring.FencedLock;
import dev.fenceguard.spring.jdbc.TransactionalFencedWrites;
import org.springframework.transaction.annotation.Transactional;

/** The {@code @FencedLock} samples of docs/spring-boot.md, in a bean of the context of docs/spring.md's sample. */
class BootOrders {

    record Receipt(String orderId, long amountCents, FenceToken fence) {}

    private final TransactionalFencedWrites writes;
    private final Outbox outbox;
    private final FencedTable orders = FencedTable.builder("public", "orders", "id", "fence_token").withKeyType(Long.class).build();
    private final FencedTable payments = FencedTable.builder("public", "payments", "id", "fence_token").build();

    BootOrders(TransactionalFencedWrites writes, Outbox outbox) {
        this.writes = writes;
        this.outbox = outbox;
    }

    // docs/spring-boot.md: ship in the transaction (begin)
    @FencedLock(key = "'orders:' + #orderId")
    @Transactional
    public void ship(long orderId, Lease lease) {
        writes.on(orders).update(orderId, lease.fence(), Assignments.of("status", "shipped")).orThrow();
        outbox.add(new Shipped(orderId));                 // same transaction
    }
    // docs/spring-boot.md: ship in the transaction (end)

    // docs/spring-boot.md: pay (begin)
    @FencedLock(key = "'orders:' + #orderId", ttl = "30s", maxWait = "5s")
    public Receipt pay(String orderId, long amountCents, Lease lease) {
        writes.on(payments).upsert(orderId, lease.fence(), Assignments.of("amount_cents", amountCents)).orThrow();
        return new Receipt(orderId, amountCents, lease.fence());
    }
    // docs/spring-boot.md: pay (end)
}
