package dev.fenceguard.dynamodb;

import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendContract;
import java.time.Duration;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/** The backend contract with CLOCK_FLOORED fences (floored by the client's clock). */
class DynamoDbClockFlooredContractTest extends LockBackendContract {

    private static final DynamoDbAsyncClient CLIENT = Dynamo.client();
    private static final FenceGuardDynamoDb.Builder BUILDER = Dynamo.withNewLockTable(CLIENT, "floored")
            .withFenceStrategy(FenceStrategy.CLOCK_FLOORED);

    @Override
    protected LockBackend backend() {
        return BUILDER.build().lockBackend();
    }

    @Override
    protected Duration shortTtl() {
        return Duration.ofMillis(500);
    }
}
