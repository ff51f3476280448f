package dev.fenceguard.examples.docs.spring;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.jooq.FencedTable;
import dev.fenceguard.spring.EnableFencedLocks;
import dev.fenceguard.spring.FencedLock;
import dev.fenceguard.spring.jdbc.TransactionalFencedWrites;
import javax.sql.DataSource;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

// The sample of docs/spring.md, "@EnableFencedLocks": run by SpringSamplesTest on the embedded PostgreSQL's
// public schema (the lock table and public.orders), with the DataSource and the transaction manager it registers.

// docs/spring.md: configuration and service (begin)
@Configuration
@EnableFencedLocks                        // defaultTtl = "30s", defaultWait = "5s", order = LOWEST_PRECEDENCE - 1000
@EnableTransactionManagement
class LockingConfig {
    @Bean
    LockClient lockClient(DataSource dataSource) {
        return LockClient.of(FenceGuardJdbc.builder(dataSource).build().lockBackend());
    }

    @Bean
    TransactionalFencedWrites fencedWrites(DataSource dataSource) {
        return TransactionalFencedWrites.of(dataSource);
    }
}

@Service
class Orders {
    private final FencedTable orders = FencedTable.builder("public", "orders", "id", "fence_token")
            .withKeyType(Long.class).build();
    private final TransactionalFencedWrites writes;

    Orders(TransactionalFencedWrites writes) {
        this.writes = writes;
    }

    @FencedLock(key = "'orders:' + #orderId")
    @Transactional
    public void ship(long orderId, Lease lease) {
        writes.on(orders).update(orderId, lease.fence(), Assignments.of("status", "shipped")).orThrow();
    }
}
// docs/spring.md: configuration and service (end)
