package dev.fenceguard.examples.docs;

import static dev.fenceguard.examples.docs.ContractFixtures.dataSource;
import static dev.fenceguard.examples.docs.ContractFixtures.postgresBackend;

import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.jdbc.FenceGuardJdbc;
import dev.fenceguard.testkit.SingleflightContract;

/** The sample of {@link SingleflightContract}'s Javadoc: singleflight on PostgreSQL (the contract closes each store). */
// dev/fenceguard/testkit/SingleflightContract.java: subclass (begin)
class PostgresSingleflightTest extends SingleflightContract {
    protected LockBackend lockBackend() { return postgresBackend; }
    protected FlightStore newStore() { return FenceGuardJdbc.builder(dataSource).build().flightStore(); }   // one per process
}
// dev/fenceguard/testkit/SingleflightContract.java: subclass (end)
