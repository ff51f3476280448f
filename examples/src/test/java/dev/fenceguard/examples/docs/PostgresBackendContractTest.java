package dev.fenceguard.examples.docs;

import static dev.fenceguard.examples.docs.ContractFixtures.dataSource;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.testkit.LockBackendContract;

/** The sample of {@link LockBackendContract}'s Javadoc: the lock contract on fence-guard's PostgreSQL backend. */
// dev/fenceguard/testkit/LockBackendContract.java: subclass (begin)
class PostgresBackendContractTest extends LockBackendContract {
    protected LockBackend backend() { return FenceGuardJdbc.builder(dataSource).build().lockBackend(); }   // a new one on the same table
}
// dev/fenceguard/testkit/LockBackendContract.java: subclass (end)
