package dev.fenceguard.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.servers.TestDynamoDb;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.Update;

/**
 * The transaction guard on the test server. dynalite 4.0.0 does not serve {@code TransactWriteItems}: there this test
 * shows that it still refuses it (so that a dynalite that learns it fails here, and the transaction tests move onto
 * it); on a server that serves it ({@code FENCE_GUARD_TEST_DYNAMODB_URL}, LocalStack) it runs the guard for real.
 */
class DynamoDbTransactionServerTest {

    private static final DynamoDbAsyncClient CLIENT = Dynamo.client();
    private static final String TABLE = Dynamo.newResourceTable(CLIENT, "transact");
    private static final FenceGuardDynamoDb DYNAMO = Dynamo.withNewLockTable(CLIENT, "transact-locks").withMetrics(LockMetrics.none()).build();
    private static final FencedDynamoDb FENCED = DYNAMO.fencedWrites();

    private static Update status(String value) {
        return Update.builder().updateExpression("SET #s = :s").expressionAttributeNames(Map.of("#s", "status"))
                .expressionAttributeValues(Map.of(":s", AttributeValue.fromS(value))).build();
    }

    private static TransactWriteItemsRequest request(TransactWriteItem... items) {
        return TransactWriteItemsRequest.builder().transactItems(items).build();
    }

    @Test
    void theGuardRunsWhereTheServerServesTransactionsAndDynaliteStillRefusesThem() {
        ItemKey order = ItemKey.of(TABLE, "id", UUID.randomUUID().toString());
        ItemKey audit = ItemKey.of(TABLE, "id", UUID.randomUUID().toString());
        TransactWriteItem log = TransactWriteItem.builder().put(p -> p.tableName(TABLE).item(Map.of("id", audit.key().get("id"),
                "what", AttributeValue.fromS("paid")))).build();
        if (TestDynamoDb.server().origin().equals("dynalite")) {
            assertThatThrownBy(() -> FENCED.transactWriteItems(request(FENCED.transactUpdate(order, FenceToken.of(5), status("paid")), log),
                    order, FenceToken.of(5))).isInstanceOfSatisfying(FenceGuardException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                        assertThat(e.getMessage()).contains("UnknownOperationException");
                    });
            return;
        }
        assertThat(FENCED.transactWriteItems(request(FENCED.transactUpdate(order, FenceToken.of(5), status("paid")), log), order,
                FenceToken.of(5))).isEqualTo(new WriteOutcome.NotFound(order.toString()));
        assertThat(FENCED.put(order, FenceToken.of(5), Map.of("status", "new")).isApplied()).isTrue();
        assertThat(FENCED.transactWriteItems(request(FENCED.transactUpdate(order, FenceToken.of(6), status("paid")), log), order,
                FenceToken.of(6)).isApplied()).isTrue();
        assertThat(FENCED.transactWriteItems(request(FENCED.transactUpdate(order, FenceToken.of(5), status("late")), log), order,
                FenceToken.of(5))).isEqualTo(new WriteOutcome.Stale(order.toString(), 5, 6, FencePolicy.SAME_OR_NEWER));
        assertThat(FENCED.transactWriteItems(request(FENCED.transactConditionCheck(order, FenceToken.of(6)), log), order,
                FenceToken.of(6)).isApplied()).isTrue();
        var item = CLIENT.getItem(b -> b.tableName(TABLE).key(order.key()).consistentRead(true)).join().item();
        assertThat(item).containsEntry("status", AttributeValue.fromS("paid")).containsEntry("_fence", AttributeValue.fromN("6"));
    }
}
