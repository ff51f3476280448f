package dev.fenceguard.examples.boot;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.idempotency.IdempotencyKey;
import dev.fenceguard.core.idempotency.IdempotencyKey.Profile;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.spring.FencedLock;
import dev.fenceguard.spring.jdbc.TransactionalFencedWrites;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** The README's Spring Boot sample, as a bean of the example application (picked up by its component scan in tests). */
@Service
class ReadmePayments {

    /** What the README's {@code pay} returns. */
    record Receipt(String orderId, String charge) {}

    private final PaymentGateway gateway;
    private final TransactionalFencedWrites writes;
    private final FencedTable orders;

    ReadmePayments(PaymentGateway gateway, TransactionalFencedWrites writes, FencedTable orders) {
        this.gateway = gateway;
        this.writes = writes;
        this.orders = orders;
    }

    // README.md: spring boot (begin)
    @FencedLock(key = "'orders:' + #orderId", ttl = "30s", maxWait = "5s")
    @Transactional                                               // begins after the lock is held
    public Receipt pay(String orderId, long amountCents, Lease lease) {   // the lease is handed in
        String key = IdempotencyKey.builder(Profile.STRIPE).scope("orders").id(orderId).operation("charge").build();
        String charge = gateway.charge(key, amountCents);
        writes.on(orders).upsert(orderId, lease.fence(), Assignments.of("status", "paid")).orThrow();
        return new Receipt(orderId, charge);
    }
    // README.md: spring boot (end)
}
