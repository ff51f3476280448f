package dev.fenceguard.examples.docs;

import static dev.fenceguard.examples.docs.ContractFixtures.dataSource;

import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.testkit.IdempotencyBackendContract;

/** The sample of {@link IdempotencyBackendContract}'s Javadoc: the idempotency contract on PostgreSQL. */
// dev/fenceguard/testkit/IdempotencyBackendContract.java: subclass (begin)
class PostgresIdempotencyContractTest extends IdempotencyBackendContract {
    protected IdempotencyBackend backend() { return FenceGuardJdbc.builder(dataSource).build().idempotencyBackend(); }
}
// dev/fenceguard/testkit/IdempotencyBackendContract.java: subclass (end)
