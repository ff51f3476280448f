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

    /**
     * 1 s: the contract extends a lease right after its acquire, inside this TTL; with 500 ms, one such extend
     * ran out of the 200 ms its lease had left on a 2-core machine at load 25 to 39 (a Maven build, the 20x loop,
     * a busy loop and other builds), dynalite being one Node.js thread among them.
     */
    @Override
    protected Duration shortTtl() {
        return Duration.ofSeconds(1);
    }
}
