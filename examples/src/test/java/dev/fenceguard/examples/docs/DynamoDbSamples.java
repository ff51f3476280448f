package dev.fenceguard.examples.docs;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.dynamodb.FenceGuardDynamoDb;
import dev.fenceguard.dynamodb.FencedDynamoDb;
import dev.fenceguard.dynamodb.ItemKey;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;

/** The samples of docs/dynamodb.md and of the dynamodb module's Javadoc; the test runs them on the test DynamoDB. */
final class DynamoDbSamples {

    private DynamoDbSamples() {}

    /** What the setup sample of docs/dynamodb.md ends with. */
    record SetUp(Optional<WriteOutcome> paid, CompletionStage<Optional<WriteOutcome>> shipped) {}

    /** The setup sample, word for word: on a DynamoDB of its own, since it names tables literally ({@code fence_guard_locks}, {@code orders}). */
    static SetUp docSetUp(DynamoDbAsyncClient client) throws Exception {
        // docs/dynamodb.md: setup (begin)
        FenceGuardDynamoDb fenceGuard = FenceGuardDynamoDb.builder(client)
                .withLockTable("fence_guard_locks")                 // the default; the fenced writes refuse it
                .withClockSkewAllowance(Duration.ofSeconds(1))      // the default: how far the clients' clocks may disagree
                .build();
        fenceGuard.createLockTable(Duration.ofMinutes(2));          // once: key pk (S), on demand; false if it existed
        LockClient locks = LockClient.of(fenceGuard.lockBackend());
        FencedDynamoDb fenced = fenceGuard.fencedWrites();          // fencedWrites(FencePolicy.STRICTLY_NEWER) for once-per-lease writes
        ItemKey order = ItemKey.of("orders", "id", "42");

        Optional<WriteOutcome> paid = locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
                lease -> fenced.update(order, lease.fence(), Map.of("status", "paid")).orThrow());          // blocking
        CompletionStage<Optional<WriteOutcome>> shipped = locks.async().withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
                lease -> fenced.async().update(order, lease.fence(), Map.of("status", "shipped"))       // CompletionStage
                        .thenApply(WriteOutcome::orThrow));
        // docs/dynamodb.md: setup (end)
        return new SetUp(paid, shipped);
    }

    /** The transaction sample: the fenced item's Update and another item of the caller's, in one TransactWriteItems. */
    static WriteOutcome docTransaction(FencedDynamoDb fenced, Lease lease) {
        // docs/dynamodb.md: transaction (begin)
        ItemKey order = ItemKey.of("orders", "id", "42");
        TransactWriteItemsRequest payment = TransactWriteItemsRequest.builder().transactItems(
                fenced.transactUpdate(order, lease.fence(), u -> u                      // your Update of the fenced item
                        .updateExpression("SET #s = :paid")
                        .expressionAttributeNames(Map.of("#s", "status"))
                        .expressionAttributeValues(Map.of(":paid", AttributeValue.fromS("paid")))),
                TransactWriteItem.builder().put(p -> p.tableName("payments")           // any other items of yours
                        .item(Map.of("id", AttributeValue.fromS("pay-7"), "order", AttributeValue.fromS("42")))).build())
                .build();
        WriteOutcome paid = fenced.transactWriteItems(payment, order, lease.fence());  // Applied, Stale(current) or NotFound
        // docs/dynamodb.md: transaction (end)
        return paid;
    }

    static WriteOutcome javadocFenced(DynamoDbAsyncClient client, Lease lease) {
        // dev/fenceguard/dynamodb/FencedDynamoDb.java: fenced update (begin)
        FencedDynamoDb fenced = FenceGuardDynamoDb.builder(client).build().fencedWrites();
        ItemKey order = ItemKey.of("orders", "id", "42");
        WriteOutcome paid = fenced.update(order, lease.fence(), Map.of("status", "paid"));
        // dev/fenceguard/dynamodb/FencedDynamoDb.java: fenced update (end)
        return paid;
    }

    static ItemKey[] javadocItemKey() {
        // dev/fenceguard/dynamodb/ItemKey.java: keys (begin)
        ItemKey order = ItemKey.of("orders", "id", "42");
        ItemKey line = ItemKey.of("order_lines", "orderId", "42", "line", 3);
        // dev/fenceguard/dynamodb/ItemKey.java: keys (end)
        return new ItemKey[] {order, line};
    }
}
