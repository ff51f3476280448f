package dev.fenceguard.jdbc;

import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.jdbc.testing.PgTestSupport;
import dev.fenceguard.testkit.IdempotencyBackendProperties;
import net.jqwik.api.lifecycle.AfterContainer;

/** Claim/record/lookup sequences on PostgreSQL against the reference model. */
class PostgresIdempotencyProperties extends IdempotencyBackendProperties {

    private static final PgTestSupport PG = new PgTestSupport("idemprops");
    private static final PostgresIdempotencyBackend BACKEND = new PostgresIdempotencyBackend(PG.idempotencyTable("idem"));

    @AfterContainer
    static void dropSchema() {
        PG.close();
    }

    @Override
    protected IdempotencyBackend backend() {
        return BACKEND;
    }
}
