package dev.fenceguard.dynamodb;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.LockMetrics;
import java.util.Optional;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The fenced-resource template again, with fences stored as the 15-digit text form ({@link FenceEncoding#TEXT}), which
 * DynamoDB compares as strings. Its items share the table of {@link DynamoDbFencedResourceProperties} (every history
 * has items of its own).
 */
class DynamoDbTextFencedResourceProperties extends DynamoDbFencedResourceProperties {

    static final FencedDynamoDb TEXT = Dynamo.withNewLockTable(CLIENT, "resprops-text-locks").withMetrics(LockMetrics.none())
            .withEncoding(FenceEncoding.TEXT).build().fencedWrites();

    @Override
    protected FencedDynamoDb fenced() {
        return TEXT;
    }

    /** The item's value as the template reads it, once its stored fence (if any) is shown to be 15-digit text. */
    @Override
    protected Optional<String> read(String id) throws Exception {
        AttributeValue fence = CLIENT.getItem(b -> b.tableName(TABLE).key(item(id).key()).consistentRead(true)).join().item().get("_fence");
        if (fence != null && (fence.s() == null || !fence.s().matches("[0-9]{15}"))) {
            throw new AssertionError("a fence stored under TEXT is not 15-digit text: " + fence);
        }
        return super.read(id);
    }
}
