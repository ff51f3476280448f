package dev.fenceguard.examples.docs;

import static dev.fenceguard.examples.docs.ContractFixtures.postgresBackend;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendProperties;

/** The sample of {@link LockBackendProperties}' Javadoc: PostgreSQL's lock backend against the reference model. */
// dev/fenceguard/testkit/LockBackendProperties.java: subclass (begin)
class PostgresBackendProperties extends LockBackendProperties {
    protected LockBackend backend() { return postgresBackend; }
}
// dev/fenceguard/testkit/LockBackendProperties.java: subclass (end)
