package dev.fenceguard.dynamodb;

import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.AsyncWaitersContract;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * {@link AsyncWaitersContract} on the test DynamoDB. Fewer callers than on Redis: each attempt is an HTTP
 * request to a Node.js server that serves a few thousand a second on this machine kind.
 */
class DynamoDbAsyncWaitersTest extends AsyncWaitersContract {

    private static final DynamoDbAsyncClient CLIENT = Dynamo.client();
    private static final FenceGuardDynamoDb DYNAMO = Dynamo.withNewLockTable(CLIENT, "waiters").withMetrics(LockMetrics.none()).build();

    @Override
    protected LockBackend backend() {
        return DYNAMO.lockBackend();
    }

    /** fence-guard's own two (the lock client's timer, the deadline thread), the SDK's Netty event loop and its schedulers. */
    @Override
    protected int platformThreadAllowance() {
        return 2 + 2 * Runtime.getRuntime().availableProcessors() + 8;
    }

    @Override
    protected int waitersThatGiveUp() {
        return 1_000;
    }

    @Override
    protected int waitersThatGetIt() {
        return 100;
    }
}
