package dev.fenceguard.dynamodb;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.FencedResourceProperties;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The fenced-resource template on FencedDynamoDb update, put and delete (tombstones) over the test DynamoDB,
 * through the blocking face (a wait on the asynchronous one). On dynalite every refusal takes the path of the
 * consistent read after a failed condition.
 */
class DynamoDbFencedResourceProperties extends FencedResourceProperties {

    static final DynamoDbAsyncClient CLIENT = Dynamo.client();
    static final String TABLE = Dynamo.newResourceTable(CLIENT, "resprops");
    static final FencedDynamoDb FENCED = Dynamo.withNewLockTable(CLIENT, "resprops-locks").withMetrics(LockMetrics.none()).build()
            .fencedWrites();

    /** The fenced writes under test; {@link DynamoDbTextFencedResourceProperties} swaps in the TEXT encoding. */
    protected FencedDynamoDb fenced() {
        return FENCED;
    }

    static ItemKey item(String id) {
        return ItemKey.of(TABLE, "id", id);
    }

    @Override
    protected void create(String id) throws Exception {
        CLIENT.putItem(b -> b.tableName(TABLE).item(Map.of("id", AttributeValue.fromS(id), "value", AttributeValue.fromS(initialValue()))))
                .join();
    }

    @Override
    protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) throws Exception {
        return fenced().update(item(id), fence, Map.of("value", value));
    }

    @Override
    protected WriteOutcome upsert(String id, FenceToken fence, String value, Pause pause) throws Exception {
        return fenced().put(item(id), fence, Map.of("value", value));
    }

    @Override
    protected WriteOutcome delete(String id, FenceToken fence, Pause pause) throws Exception {
        return fenced().delete(item(id), fence);
    }

    @Override
    protected Set<Operation> operations() {
        return EnumSet.allOf(Operation.class);
    }

    @Override
    protected Optional<String> read(String id) throws Exception {
        var item = CLIENT.getItem(b -> b.tableName(TABLE).key(item(id).key()).consistentRead(true)).join().item();
        if (item == null || item.isEmpty() || item.containsKey("_deleted")) {
            return Optional.empty();
        }
        return Optional.ofNullable(item.get("value")).map(AttributeValue::s);
    }
}
