package dev.fenceguard.dynamodb;

import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendProperties;
import java.time.Duration;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/** Stateful chains on the test DynamoDB against the reference model (expiry by the client's clock, 50 ms skew allowance). */
class DynamoDbBackendProperties extends LockBackendProperties {

    private static final DynamoDbAsyncClient CLIENT = Dynamo.client();
    private static final DynamoDbLockBackend BACKEND = Dynamo.withNewLockTable(CLIENT, "props").build().lockBackend();

    @Override
    protected LockBackend backend() {
        return BACKEND;
    }

    @Override
    protected Duration expirySlack() {
        return Duration.ofMillis(150); // the 50 ms skew allowance, and the server's latency
    }
}
