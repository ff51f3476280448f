package dev.fenceguard.dynamodb;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendContract;
import java.time.Duration;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/** The backend contract on the test DynamoDB (dynalite here), DENSE fences, a 50 ms clock-skew allowance. */
class DynamoDbBackendContractTest extends LockBackendContract {

    private static final DynamoDbAsyncClient CLIENT = Dynamo.client();
    private static final FenceGuardDynamoDb.Builder BUILDER = Dynamo.withNewLockTable(CLIENT, "contract");

    @Override
    protected LockBackend backend() {
        return BUILDER.build().lockBackend();
    }

    @Override
    protected Duration shortTtl() {
        return Duration.ofMillis(500);
    }
}
