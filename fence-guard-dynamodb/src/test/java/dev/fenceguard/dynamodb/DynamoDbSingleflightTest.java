package dev.fenceguard.dynamodb;

import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.SingleflightContract;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/** Singleflight on the test DynamoDB: the contract over {@link FenceGuardDynamoDb#flightStore()}, waiters told by the store's watch. */
class DynamoDbSingleflightTest extends SingleflightContract {

    private static final DynamoDbAsyncClient CLIENT = Dynamo.client();
    private static final FenceGuardDynamoDb.Builder BUILDER = Dynamo.withNewLockTable(CLIENT, "singleflight").withMetrics(LockMetrics.none());
    private static final FenceGuardDynamoDb DYNAMO = BUILDER.build();

    @Override
    protected LockBackend lockBackend() {
        return DYNAMO.lockBackend();
    }

    @Override
    protected FlightStore newStore() {
        // one entry per simulated process, as each process builds its own; they share the client
        return BUILDER.build().flightStore();
    }
}
