package dev.fenceguard.dynamodb;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LeaderElectionContract;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/** Leader election on the test DynamoDB, the leaders' writes fenced by {@link FencedDynamoDb} (a fenced put). */
class DynamoDbLeaderElectionTest extends LeaderElectionContract {

    private static final DynamoDbAsyncClient CLIENT = Dynamo.client();
    private static final String JOBS = Dynamo.newResourceTable(CLIENT, "jobs");
    private static final FenceGuardDynamoDb DYNAMO = Dynamo.withNewLockTable(CLIENT, "election").withMetrics(LockMetrics.none()).build();

    @Override
    protected LockBackend backend() {
        return DYNAMO.lockBackend();
    }

    @Override
    protected WriteOutcome write(String resource, FenceToken term) {
        return DYNAMO.fencedWrites().put(ItemKey.of(JOBS, "id", resource), term, Map.of("lastRun", "term " + term.value()));
    }
}
