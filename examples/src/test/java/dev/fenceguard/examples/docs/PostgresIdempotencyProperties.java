package dev.fenceguard.examples.docs;

import static dev.fenceguard.examples.docs.ContractFixtures.postgresIdempotency;

import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.testkit.IdempotencyBackendProperties;

/** The sample of {@link IdempotencyBackendProperties}' Javadoc: PostgreSQL's idempotency backend against the model. */
// dev/fenceguard/testkit/IdempotencyBackendProperties.java: subclass (begin)
class PostgresIdempotencyProperties extends IdempotencyBackendProperties {
    protected IdempotencyBackend backend() { return postgresIdempotency; }
}
// dev/fenceguard/testkit/IdempotencyBackendProperties.java: subclass (end)
