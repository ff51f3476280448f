package dev.fenceguard.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyState;
import dev.fenceguard.testkit.IdempotencyBackendContract;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** The idempotency contract on the test DynamoDB (entries expire by DynamoDB's TTL: purge deletes nothing); the stored item, pinned. */
class DynamoDbIdempotencyContractTest extends IdempotencyBackendContract {

    private static final DynamoDbAsyncClient CLIENT = Dynamo.client();
    private static final FenceGuardDynamoDb DYNAMO = Dynamo.withNewLockTable(CLIENT, "idem").withMetrics(LockMetrics.none()).build();

    @Override
    protected IdempotencyBackend backend() {
        return DYNAMO.idempotencyBackend();
    }

    @Override
    protected boolean purgeDeletes() {
        return false;
    }

    @Test
    void theEntryIsOneItemOfTheLockTableUnderAKeyOfItsOwn() {
        DynamoDbIdempotencyBackend b = DYNAMO.idempotencyBackend();
        Duration d = Duration.ofSeconds(30);
        LockKey key = LockKey.of("layout/order:42");
        b.claim(key, "ab12", 7, d, Duration.ofSeconds(60), d).toCompletableFuture().join();
        b.record(key, 7, IdempotencyState.COMPLETED, new byte[] {1, 2}, Duration.ofSeconds(60), d).toCompletableFuture().join();
        var item = CLIENT.getItem(r -> r.tableName(DYNAMO.lockBackend().table())
                .key(java.util.Map.of("pk", AttributeValue.fromS("ilayout/order:42"))).consistentRead(true)).join().item();
        assertThat(item).containsOnlyKeys("pk", "state", "fingerprint", "fence", "expiresAt", "retainUntil", "ttl", "result")
                .containsEntry("state", AttributeValue.fromS("C")).containsEntry("fence", AttributeValue.fromN("7"));
        assertThat(Long.parseLong(item.get("retainUntil").n()) - Long.parseLong(item.get("expiresAt").n())).isEqualTo(60_000);
        assertThat(Long.parseLong(item.get("ttl").n())).isEqualTo(Math.ceilDiv(Long.parseLong(item.get("retainUntil").n()), 1000L));
    }
}
