package dev.fenceguard.dynamodb;

import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.testkit.IdempotencyBackendProperties;

/** Claim/record/lookup sequences on the test DynamoDB against the reference model. */
class DynamoDbIdempotencyProperties extends IdempotencyBackendProperties {

    private static final FenceGuardDynamoDb DYNAMO = Dynamo.withNewLockTable(Dynamo.client(), "idemprops")
            .withMetrics(LockMetrics.none()).build();

    @Override
    protected IdempotencyBackend backend() {
        return DYNAMO.idempotencyBackend();
    }
}
