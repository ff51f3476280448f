package dev.fenceguard.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Delete;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.Update;

/**
 * The fence part of a caller's {@code TransactWriteItems}: the actions built ({@code transactUpdate}, {@code transactPut},
 * {@code transactDelete}, {@code transactConditionCheck}) and the outcome read from the answer. dynalite 4.0.0 has no
 * {@code TransactWriteItems} (it answers {@code UnknownOperationException}: {@link DynamoDbTransactionServerTest}), so
 * this runs against {@link CannedDynamoDb} behind the real SDK. Its answers are DynamoDB's documented shapes (a
 * {@code TransactionCanceledException} with {@code CancellationReasons}, one per action in the request's order, each
 * with {@code Code} and, for a failed condition that asked for {@code ALL_OLD}, the {@code Item} it saw), written
 * from the API reference, not recorded from AWS. Each test counts the HTTP requests the call made.
 */
class TransactWriteItemsTest {

    private static final String CANCELED = "com.amazonaws.dynamodb.v20120810#TransactionCanceledException";
    private static final ItemKey ORDER = ItemKey.of("orders", "id", "42");
    private static final FenceToken SEVEN = FenceToken.of(7);
    private static final TransactWriteItem AUDIT = TransactWriteItem.builder()
            .put(p -> p.tableName("audit").item(Map.of("id", AttributeValue.fromS("a-1"), "what", AttributeValue.fromS("paid")))).build();

    private final CannedDynamoDb server = CannedDynamoDb.open();
    private final DynamoDbAsyncClient client = server.client();
    private final FenceGuardDynamoDb dynamo = FenceGuardDynamoDb.builder(client).withMetrics(LockMetrics.none()).build();
    private final FencedDynamoDb fenced = dynamo.fencedWrites();

    @AfterEach
    void close() throws Exception {
        server.close();
    }

    /** A cancellation as DynamoDB documents it: the codes in the message, one reason per action. */
    private static String canceled(String... reasons) {
        StringBuilder codes = new StringBuilder();
        for (String r : reasons) {
            String code = r.replaceAll(".*\"Code\":\"([A-Za-z]+)\".*", "$1");
            codes.append(codes.isEmpty() ? "" : ", ").append(code);
        }
        return "{\"__type\":\"" + CANCELED + "\",\"Message\":\"Transaction cancelled, please refer cancellation reasons for specific"
                + " reasons [" + codes + "]\",\"CancellationReasons\":[" + String.join(",", reasons) + "]}";
    }

    private static String failedWith(String item) {
        return "{\"Code\":\"ConditionalCheckFailed\",\"Message\":\"The conditional request failed\"" + (item == null ? "" : ",\"Item\":" + item)
                + "}";
    }

    private static final String NONE = "{\"Code\":\"None\"}";

    private static Update paid() {
        return Update.builder().updateExpression("SET #s = :s").expressionAttributeNames(Map.of("#s", "status"))
                .expressionAttributeValues(Map.of(":s", AttributeValue.fromS("paid"))).build();
    }

    private static TransactWriteItemsRequest request(TransactWriteItem... items) {
        return TransactWriteItemsRequest.builder().transactItems(items).build();
    }

    private List<String> targets() {
        return server.requests().stream().map(CannedDynamoDb.Request::target).toList();
    }

    @Test
    void anAppliedTransactionIsOneRequestWithTheFenceAddedToTheUsersOwnUpdate() {
        TransactWriteItem update = fenced.transactUpdate(ORDER, SEVEN, paid());
        Update u = update.update();
        assertThat(u.tableName()).isEqualTo("orders");
        assertThat(u.key()).isEqualTo(ORDER.key());
        assertThat(u.updateExpression()).isEqualTo("SET #fgFence = :fgFence, #s = :s");
        assertThat(u.conditionExpression())
                .isEqualTo("attribute_exists(#fgKey) AND attribute_not_exists(#fgDeleted) AND (attribute_not_exists(#fgFence) OR #fgFence <= :fgFence)");
        assertThat(u.expressionAttributeNames()).isEqualTo(Map.of("#s", "status", "#fgFence", "_fence", "#fgDeleted", "_deleted", "#fgKey", "id"));
        assertThat(u.expressionAttributeValues()).isEqualTo(Map.of(":s", AttributeValue.fromS("paid"), ":fgFence", AttributeValue.fromN("7")));
        assertThat(u.returnValuesOnConditionCheckFailure()).isEqualTo(ReturnValuesOnConditionCheckFailure.ALL_OLD);

        server.answer(200, "{}");
        assertThat(fenced.transactWriteItems(request(update, AUDIT), ORDER, SEVEN)).isEqualTo(new WriteOutcome.Applied("orders[id=42]", 7));
        assertThat(targets()).containsExactly("DynamoDB_20120810.TransactWriteItems");
        assertThat(server.requests().get(0).body()).contains("\"TableName\":\"audit\"").contains("\":fgFence\":{\"N\":\"7\"}")
                .contains("\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"");
    }

    @Test
    void theUsersConditionIsKeptBesideTheFenceAndAnExpressionWithoutSetGetsOne() {
        Update u = fenced.transactUpdate(ORDER, SEVEN, b -> b.updateExpression("ADD #n :one").conditionExpression("#s = :new")
                .expressionAttributeNames(Map.of("#n", "count", "#s", "status"))
                .expressionAttributeValues(Map.of(":one", AttributeValue.fromN("1"), ":new", AttributeValue.fromS("new")))).update();
        assertThat(u.updateExpression()).isEqualTo("SET #fgFence = :fgFence ADD #n :one");
        assertThat(u.conditionExpression()).endsWith("(attribute_not_exists(#fgFence) OR #fgFence <= :fgFence) AND (#s = :new)");
        assertThat(fenced.transactUpdate(ORDER, SEVEN, Update.builder().build()).update().updateExpression())
                .as("an Update of its own records only the fence").isEqualTo("SET #fgFence = :fgFence");
        assertThat(fenced.transactUpdate(ORDER, SEVEN, b -> b.updateExpression("set #s = :s REMOVE #old")
                .expressionAttributeNames(Map.of("#s", "status", "#old", "old")).expressionAttributeValues(Map.of(":s", AttributeValue.fromS("x"))))
                .update().updateExpression()).isEqualTo("set #fgFence = :fgFence, #s = :s REMOVE #old");
    }

    @Test
    void aCancellationByTheFenceIsStaleFromTheItemSentBackWithNoRead() {
        server.answer(400, canceled(failedWith("{\"id\":{\"S\":\"42\"},\"_fence\":{\"N\":\"9\"},\"status\":{\"S\":\"paid\"}}"), NONE));
        WriteOutcome outcome = fenced.transactWriteItems(request(fenced.transactUpdate(ORDER, SEVEN, paid()), AUDIT), ORDER, SEVEN);
        assertThat(outcome).isEqualTo(new WriteOutcome.Stale("orders[id=42]", 7, 9, FencePolicy.SAME_OR_NEWER));
        assertThat(targets()).containsExactly("DynamoDB_20120810.TransactWriteItems");
    }

    @Test
    void anUpdateOfAnAbsentItemIsNotFoundAfterOneConsistentReadAndOfATombstoneWithNone() {
        // DynamoDB sends no Item for an absent one: the read tells absent from a server that sends none
        server.answer(400, canceled(NONE, failedWith(null)));
        server.answer(200, "{}");
        assertThat(fenced.transactWriteItems(request(AUDIT, fenced.transactUpdate(ORDER, SEVEN, paid())), ORDER, SEVEN))
                .isEqualTo(new WriteOutcome.NotFound("orders[id=42]"));
        assertThat(targets()).containsExactly("DynamoDB_20120810.TransactWriteItems", "DynamoDB_20120810.GetItem");
        assertThat(server.requests().get(1).body()).contains("\"ConsistentRead\":true");

        server.answer(400, canceled(failedWith("{\"id\":{\"S\":\"42\"},\"_fence\":{\"N\":\"3\"},\"_deleted\":{\"BOOL\":true}}"), NONE));
        assertThat(fenced.async().transactWriteItems(request(fenced.transactUpdate(ORDER, SEVEN, paid()), AUDIT), ORDER, SEVEN)
                .toCompletableFuture().join()).isEqualTo(new WriteOutcome.NotFound("orders[id=42]"));
        assertThat(server.requests()).hasSize(3);
    }

    @Test
    void anotherItemsFailedConditionIsAnExceptionNamingEveryReasonNeverStale() {
        server.answer(400, canceled(NONE, failedWith("{\"id\":{\"S\":\"a-1\"},\"what\":{\"S\":\"secret-ish\"}}")));
        TransactWriteItemsRequest request = request(fenced.transactUpdate(ORDER, SEVEN, paid()), AUDIT);
        assertThatThrownBy(() -> fenced.transactWriteItems(request, ORDER, SEVEN)).isInstanceOfSatisfying(FencedTransactionCanceledException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
            assertThat(e.fencedItemIndex()).isZero();
            assertThat(e.cancellationReasons()).extracting(r -> r.code()).containsExactly("None", "ConditionalCheckFailed");
            assertThat(e.cancellationReasons().get(1).item()).containsEntry("what", AttributeValue.fromS("secret-ish"));
            assertThat(e.getMessage()).contains("[None, ConditionalCheckFailed]").contains("transactItems[0]").doesNotContain("secret-ish");
            assertThat(e.getCause().toString()).contains("TransactionCanceledException").doesNotContain("secret-ish");
        });
        assertThat(targets()).as("no read: the reason at the fenced index says the fence passed").hasSize(1);
    }

    @Test
    void theUsersOwnConditionOnTheFencedItemFailingIsAnExceptionNotStale() {
        server.answer(400, canceled(failedWith("{\"id\":{\"S\":\"42\"},\"_fence\":{\"N\":\"5\"},\"status\":{\"S\":\"shipped\"}}")));
        TransactWriteItem update = fenced.transactUpdate(ORDER, SEVEN, b -> b.updateExpression("SET #s = :s").conditionExpression("#s = :new")
                .expressionAttributeNames(Map.of("#s", "status"))
                .expressionAttributeValues(Map.of(":s", AttributeValue.fromS("paid"), ":new", AttributeValue.fromS("new"))));
        assertThatThrownBy(() -> fenced.transactWriteItems(request(update), ORDER, SEVEN))
                .isInstanceOfSatisfying(FencedTransactionCanceledException.class, e -> assertThat(e.getMessage())
                        .contains("not its fence part"));
    }

    @Test
    void aConflictIsUnavailableOnBothFaces() {
        server.answer(400, canceled("{\"Code\":\"TransactionConflict\",\"Message\":\"Transaction is ongoing for the item\"}", NONE));
        TransactWriteItemsRequest request = request(fenced.transactUpdate(ORDER, SEVEN, paid()), AUDIT);
        assertThatThrownBy(() -> fenced.async().transactWriteItems(request, ORDER, SEVEN).toCompletableFuture().join())
                .isInstanceOf(CompletionException.class).cause().isInstanceOfSatisfying(FencedTransactionCanceledException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
                    assertThat(e.getMessage()).contains("cancelled with TransactionConflict").contains("[TransactionConflict, None]");
                });
        assertThat(targets()).hasSize(1);
    }

    @Test
    void withoutCancellationReasonsOneReadDecidesStaleOrAnException() {
        String bare = "{\"__type\":\"" + CANCELED + "\",\"Message\":\"Transaction cancelled\"}";
        server.answer(400, bare).answer(200, "{\"Item\":{\"id\":{\"S\":\"42\"},\"_fence\":{\"N\":\"9\"}}}");
        TransactWriteItemsRequest request = request(fenced.transactConditionCheck(ORDER, SEVEN), AUDIT);
        assertThat(fenced.transactWriteItems(request, ORDER, SEVEN)).isEqualTo(new WriteOutcome.Stale("orders[id=42]", 7, 9, FencePolicy.SAME_OR_NEWER));
        server.answer(400, bare).answer(200, "{\"Item\":{\"id\":{\"S\":\"42\"},\"_fence\":{\"N\":\"5\"}}}");
        assertThatThrownBy(() -> fenced.transactWriteItems(request, ORDER, SEVEN)).isInstanceOf(FencedTransactionCanceledException.class)
                .hasMessageContaining("no cancellation reasons");
        assertThat(targets()).containsExactly("DynamoDB_20120810.TransactWriteItems", "DynamoDB_20120810.GetItem",
                "DynamoDB_20120810.TransactWriteItems", "DynamoDB_20120810.GetItem");
    }

    @Test
    void aConditionCheckPutAndDeleteCarryTheRuleAndStrictlyNewerRefusesTheSameFence() {
        FencedDynamoDb strict = dynamo.fencedWrites(FencePolicy.STRICTLY_NEWER);
        var check = strict.transactConditionCheck(ORDER, SEVEN).conditionCheck();
        assertThat(check.conditionExpression()).isEqualTo("(attribute_not_exists(#fgFence) OR #fgFence < :fgFence)");
        assertThat(check.key()).isEqualTo(ORDER.key());
        Put put = fenced.transactPut(ORDER, SEVEN, b -> b.item(Map.of("status", AttributeValue.fromS("new")))).put();
        assertThat(put.item()).isEqualTo(Map.of("id", AttributeValue.fromS("42"), "status", AttributeValue.fromS("new"), "_fence",
                AttributeValue.fromN("7")));
        assertThat(put.conditionExpression()).isEqualTo("(attribute_not_exists(#fgFence) OR #fgFence <= :fgFence)");
        Put tombstone = fenced.transactDelete(ORDER, SEVEN).put();
        assertThat(tombstone.item()).isEqualTo(Map.of("id", AttributeValue.fromS("42"), "_fence", AttributeValue.fromN("7"), "_deleted",
                AttributeValue.fromBool(true)));

        server.answer(400, canceled(NONE, failedWith("{\"id\":{\"S\":\"42\"},\"_fence\":{\"N\":\"7\"}}")));
        assertThat(strict.transactWriteItems(request(AUDIT, strict.transactConditionCheck(ORDER, SEVEN)), ORDER, SEVEN))
                .isEqualTo(new WriteOutcome.Stale("orders[id=42]", 7, 7, FencePolicy.STRICTLY_NEWER));
        server.answer(400, canceled(failedWith("{\"id\":{\"S\":\"42\"},\"_fence\":{\"N\":\"8\"},\"_deleted\":{\"BOOL\":true}}")));
        TransactWriteItem again = fenced.transactPut(ORDER, SEVEN, b -> b.item(Map.of("status", AttributeValue.fromS("new"))));
        assertThat(fenced.transactWriteItems(request(again), ORDER, SEVEN))
                .as("a tombstone's fence counts for a put").isEqualTo(new WriteOutcome.Stale("orders[id=42]", 7, 8, FencePolicy.SAME_OR_NEWER));
        assertThat(targets()).hasSize(2);
    }

    @Test
    void underTextTheFenceIsTheFifteenDigitTextAndAStoredNumberIsAClearError() {
        FencedDynamoDb text = FenceGuardDynamoDb.builder(client).withMetrics(LockMetrics.none()).withEncoding(FenceEncoding.TEXT).build()
                .fencedWrites();
        TransactWriteItem update = text.transactUpdate(ORDER, SEVEN, paid());
        assertThat(update.update().expressionAttributeValues()).containsEntry(":fgFence", AttributeValue.fromS("000000000000007"));
        server.answer(400, canceled(failedWith("{\"id\":{\"S\":\"42\"},\"_fence\":{\"S\":\"000000000000010\"}}")));
        assertThat(text.transactWriteItems(request(update), ORDER, SEVEN))
                .isEqualTo(new WriteOutcome.Stale("orders[id=42]", 7, 10, FencePolicy.SAME_OR_NEWER));
        server.answer(400, canceled(failedWith("{\"id\":{\"S\":\"42\"},\"_fence\":{\"N\":\"3\"}}")));
        assertThatThrownBy(() -> text.transactWriteItems(request(update), ORDER, SEVEN)).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
            assertThat(e.getMessage()).contains("is of type N, but these fenced writes store fences as TEXT (type S");
        });
    }

    @Test
    void badInputIsRefusedBeforeAnyRequest() {
        TransactWriteItem update = fenced.transactUpdate(ORDER, SEVEN, paid());
        String lockTable = dynamo.lockBackend().table();
        assertThatThrownBy(() -> fenced.transactUpdate(ItemKey.of(lockTable, "pk", "kx"), SEVEN, paid()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock table");
        assertThatThrownBy(() -> fenced.transactConditionCheck(ItemKey.of(lockTable, "pk", "kx"), SEVEN))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock table");
        TransactWriteItem onLocks = TransactWriteItem.builder().put(p -> p.tableName(lockTable).item(Map.of("pk", AttributeValue.fromS("kx")))).build();
        assertThatThrownBy(() -> fenced.transactWriteItems(request(update, onLocks), ORDER, SEVEN))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("transactItems[1] acts on the lock table");
        assertThatThrownBy(() -> fenced.transactWriteItems(request(AUDIT), ORDER, SEVEN))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no action on orders[id=42]");
        assertThatThrownBy(() -> fenced.transactWriteItems(request(update, fenced.transactConditionCheck(ORDER, SEVEN)), ORDER, SEVEN))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("both act on orders[id=42]");
        TransactWriteItem unfenced = TransactWriteItem.builder().update(paid().toBuilder().tableName("orders").key(ORDER.key()).build()).build();
        assertThatThrownBy(() -> fenced.transactWriteItems(request(unfenced), ORDER, SEVEN))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without this fence's condition");
        assertThatThrownBy(() -> fenced.transactWriteItems(request(update), ORDER, FenceToken.of(8)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another fence than");
        assertThatThrownBy(() -> dynamo.fencedWrites(FencePolicy.STRICTLY_NEWER).transactWriteItems(request(update), ORDER, SEVEN))
                .as("built under another policy").isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without this fence's condition");
        TransactWriteItem delete = TransactWriteItem.builder().delete(Delete.builder().tableName("orders").key(ORDER.key()).build()).build();
        assertThatThrownBy(() -> fenced.transactWriteItems(request(delete), ORDER, SEVEN))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("use transactDelete");
        assertThatThrownBy(() -> fenced.transactWriteItems(request(TransactWriteItem.builder().build()), ORDER, SEVEN))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("transactItems[0] has no action");
        assertThatThrownBy(() -> fenced.transactWriteItems(TransactWriteItemsRequest.builder().build(), ORDER, SEVEN))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no transactItems");
        assertThatThrownBy(() -> fenced.transactUpdate(ORDER, SEVEN, b -> b.updateExpression("SET #x = :x")
                .expressionAttributeNames(Map.of("#x", "_fence")).expressionAttributeValues(Map.of(":x", AttributeValue.fromN("99")))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names the fence attribute '_fence'");
        assertThatThrownBy(() -> fenced.transactUpdate(ORDER, SEVEN, b -> b.updateExpression("REMOVE _deleted")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("deleted attribute '_deleted'");
        assertThatThrownBy(() -> fenced.transactUpdate(ORDER, SEVEN, b -> b.updateExpression("SET #fgFence = :v")
                .expressionAttributeNames(Map.of("#fgFence", "other")).expressionAttributeValues(Map.of(":v", AttributeValue.fromN("1")))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("placeholder #fgFence");
        assertThatThrownBy(() -> fenced.transactUpdate(ORDER, SEVEN, paid().toBuilder().tableName("other").build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("table 'other' is not the table of orders[id=42]");
        assertThatThrownBy(() -> fenced.transactUpdate(ORDER, SEVEN, paid().toBuilder().key(Map.of("id", AttributeValue.fromS("43"))).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("guard another item with transactConditionCheck");
        assertThatThrownBy(() -> fenced.transactPut(ORDER, SEVEN, b -> b.item(Map.of("id", AttributeValue.fromS("43")))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another value of the key attribute 'id'");
        assertThatThrownBy(() -> fenced.transactPut(ORDER, SEVEN, b -> b.item(Map.of("_fence", AttributeValue.fromN("99")))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fence attribute '_fence'");
        assertThatThrownBy(() -> fenced.transactWriteItems(null, ORDER, SEVEN)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> fenced.async().transactWriteItems(request(update), ORDER, null)).isInstanceOf(NullPointerException.class);
        assertThat(server.requests()).as("requests sent for bad input").isEmpty();
    }
}
