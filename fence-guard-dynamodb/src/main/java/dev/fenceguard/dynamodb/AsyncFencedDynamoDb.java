package dev.fenceguard.dynamodb;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.Stages;
import dev.fenceguard.core.internal.WarmUps;
import dev.fenceguard.core.spi.WriteRule;
import dev.fenceguard.dynamodb.internal.Attributes;
import dev.fenceguard.dynamodb.internal.Bounded;
import dev.fenceguard.dynamodb.internal.DynamoDbErrors;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The non-blocking face of {@link FencedDynamoDb}: the same fenced writes, each returning a
 * {@link CompletionStage} at once, with the same outcomes ({@code Applied}, {@code Stale(current)},
 * {@code NotFound}) and the same tombstones. Get it with {@link FencedDynamoDb#async()}; the blocking
 * methods there are a wait on these.
 *
 * <p><b>How a write runs.</b> One conditional write ({@code UpdateItem} or {@code PutItem}) whose condition
 * is the write rule on the fence attribute: {@code attribute_not_exists(#f) OR #f <= :f}
 * ({@code #f < :f} under {@link FencePolicy#STRICTLY_NEWER}); the data and the new fence change in that one
 * write or not at all. An applied write takes that one call. A refused one needs to tell {@code Stale} from
 * {@code NotFound}: it asks DynamoDB for the item as the condition saw it
 * ({@code ReturnValuesOnConditionCheckFailure=ALL_OLD}), and where the server sends none back (dynalite)
 * reads the item once, strongly consistent. If that read finds the write admissible after all (another
 * writer changed the item in between), the write is sent again, a few times at most; a call that keeps
 * losing fails with {@code UNAVAILABLE}.
 *
 * <p><b>Bounded.</b> Each call ends by the call timeout ({@link FenceGuardDynamoDb.Builder#withCallTimeout}):
 * at the timeout the stage fails with {@code TIMEOUT} and the request still out is cancelled. A write that
 * timed out may still have been applied: read the item to know.
 *
 * <p><b>Errors.</b> Invalid arguments throw {@link IllegalArgumentException} or
 * {@link NullPointerException} at once, before any I/O. DynamoDB failures complete the stage with a
 * {@link FenceGuardException}. The stages complete on the SDK's threads or fence-guard's timer thread:
 * attach blocking work with the {@code *Async} methods of {@link CompletionStage}.
 *
 * <p>Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class AsyncFencedDynamoDb {

    private static final int ATTEMPTS = 8;

    private final DynamoDbAsyncClient client;
    private final WriteRule rule;
    private final String fenceAttribute;
    private final String deletedAttribute;
    private final List<String> lockTables;
    private final Duration timeout;
    private final String warmUpTable;

    AsyncFencedDynamoDb(DynamoDbAsyncClient client, WriteRule rule, String fenceAttribute, String deletedAttribute,
            List<String> lockTables, Duration timeout, String warmUpTable) {
        this.client = client;
        this.rule = rule;
        this.fenceAttribute = fenceAttribute;
        this.deletedAttribute = deletedAttribute;
        this.lockTables = lockTables;
        this.timeout = timeout;
        this.warmUpTable = warmUpTable;
    }

    WriteRule rule() {
        return rule;
    }

    /**
     * {@link FencedDynamoDb#warmUp()} without waiting.
     *
     * @return a stage that completes when the reads have answered
     * @since 0.1
     */
    public CompletionStage<Void> warmUp() {
        Map<String, AttributeValue> key = Map.of(DynamoDbLockBackend.PK, AttributeValue.fromS(DynamoDbLockBackend.WARM_UP_PK));
        GetItemRequest get = GetItemRequest.builder().tableName(warmUpTable).key(key).consistentRead(true).build();
        return Bounded.<Void>run(timeout, null, "warm-up", chain -> WarmUps.rounds(chain.send(() -> client.getItem(get)),
                () -> chain.send(() -> client.getItem(get)))).thenRun(WarmUps::outcomes);
    }

    /**
     * {@link FencedDynamoDb#update} without waiting.
     *
     * @return a stage of {@code Applied}, {@code Stale(stored)} or {@code NotFound}
     * @throws IllegalArgumentException as {@link FencedDynamoDb#update}, before any I/O
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public CompletionStage<WriteOutcome> update(ItemKey item, FenceToken fence, Map<String, ?> values) {
        Map<String, AttributeValue> data = data(item, fence, values, "update");
        Map<String, String> names = names(item);
        Map<String, AttributeValue> vals = new HashMap<>();
        vals.put(":f", encoded(fence));
        StringBuilder set = new StringBuilder("SET #f = :f");
        int i = 0;
        for (Map.Entry<String, AttributeValue> e : data.entrySet()) {
            names.put("#a" + i, e.getKey());
            vals.put(":a" + i, e.getValue());
            set.append(", #a").append(i).append(" = :a").append(i);
            i++;
        }
        UpdateItemRequest write = UpdateItemRequest.builder().tableName(item.table()).key(item.key())
                .updateExpression(set.toString()).conditionExpression("attribute_exists(#k) AND attribute_not_exists(#d) AND " + admits())
                .expressionAttributeNames(names).expressionAttributeValues(vals)
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD).build();
        return observed(item, "update", fence, chain -> attempt(chain, item, fence, () -> client.updateItem(write).thenApply(r -> null),
                seen -> seen == null || deleted(seen) && rule.admits(fence, stored(seen)) ? notFound(item) : null));
    }

    /**
     * {@link FencedDynamoDb#put} without waiting.
     *
     * @return a stage of {@code Applied} or {@code Stale(stored)}
     * @throws IllegalArgumentException as {@link FencedDynamoDb#put}, before any I/O
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public CompletionStage<WriteOutcome> put(ItemKey item, FenceToken fence, Map<String, ?> values) {
        Map<String, AttributeValue> data = data(item, fence, values, "put");
        Map<String, AttributeValue> whole = new LinkedHashMap<>(item.key());
        whole.putAll(data);
        whole.put(fenceAttribute, encoded(fence));
        PutItemRequest write = PutItemRequest.builder().tableName(item.table()).item(whole).conditionExpression(admits())
                .expressionAttributeNames(Map.of("#f", fenceAttribute)).expressionAttributeValues(Map.of(":f", encoded(fence)))
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD).build();
        return observed(item, "put", fence, chain -> attempt(chain, item, fence, () -> client.putItem(write).thenApply(r -> null),
                seen -> null));
    }

    /**
     * {@link FencedDynamoDb#claim} without waiting.
     *
     * @return a stage of {@code Applied}, {@code Stale(stored)} or {@code NotFound} (fence recorded on the tombstone)
     * @throws IllegalArgumentException as {@link FencedDynamoDb#claim}, before any I/O
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public CompletionStage<WriteOutcome> claim(ItemKey item, FenceToken fence) {
        check(item, fence);
        UpdateItemRequest onItem = UpdateItemRequest.builder().tableName(item.table()).key(item.key())
                .updateExpression("SET #f = :f").conditionExpression("attribute_exists(#k) AND attribute_not_exists(#d) AND " + admits())
                .expressionAttributeNames(names(item)).expressionAttributeValues(Map.of(":f", encoded(fence)))
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD).build();
        UpdateItemRequest onTombstone = UpdateItemRequest.builder().tableName(item.table()).key(item.key())
                .updateExpression("SET #f = :f, #d = :true")
                .conditionExpression("(attribute_not_exists(#k) OR attribute_exists(#d)) AND " + admits())
                .expressionAttributeNames(names(item)).expressionAttributeValues(Map.of(":f", encoded(fence), ":true", AttributeValue.fromBool(true)))
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD).build();
        return observed(item, "claim", fence, chain -> claim(chain, item, fence, onItem, onTombstone, ATTEMPTS));
    }

    private CompletionStage<WriteOutcome> claim(Bounded<WriteOutcome> chain, ItemKey item, FenceToken fence, UpdateItemRequest onItem,
            UpdateItemRequest onTombstone, int attemptsLeft) {
        return chain.send(() -> client.updateItem(onItem)).handle((applied, error) -> {
            if (error == null) {
                return CompletableFuture.<WriteOutcome>completedFuture(new WriteOutcome.Applied(item.toString(), fence.value()));
            }
            if (!DynamoDbErrors.isConditionFailed(error)) {
                return CompletableFuture.<WriteOutcome>failedFuture(error);
            }
            return refused(chain, item, error).thenCompose(seen -> {
                if (seen != null && !rule.admits(fence, stored(seen))) {
                    return CompletableFuture.completedFuture(rule.stale(item.toString(), fence, stored(seen)));
                }
                if (attemptsLeft <= 1) {
                    throw contended(item, "claim");
                }
                if (seen != null && !deleted(seen)) {
                    return claim(chain, item, fence, onItem, onTombstone, attemptsLeft - 1); // created since
                }
                // absent or a tombstone: record the fence on the tombstone, so older fences stay refused
                return chain.send(() -> client.updateItem(onTombstone)).handle((tomb, tombError) -> {
                    if (tombError == null) {
                        return CompletableFuture.<WriteOutcome>completedFuture(notFound(item));
                    }
                    if (!DynamoDbErrors.isConditionFailed(tombError)) {
                        return CompletableFuture.<WriteOutcome>failedFuture(tombError);
                    }
                    return claim(chain, item, fence, onItem, onTombstone, attemptsLeft - 1);
                }).thenCompose(stage -> stage);
            });
        }).thenCompose(stage -> stage);
    }

    /**
     * {@link FencedDynamoDb#delete} without waiting.
     *
     * @return a stage of {@code Applied} or {@code Stale(stored)}
     * @throws IllegalArgumentException as {@link FencedDynamoDb#delete}, before any I/O
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public CompletionStage<WriteOutcome> delete(ItemKey item, FenceToken fence) {
        check(item, fence);
        Map<String, AttributeValue> tombstone = new LinkedHashMap<>(item.key());
        tombstone.put(fenceAttribute, encoded(fence));
        tombstone.put(deletedAttribute, AttributeValue.fromBool(true));
        PutItemRequest write = PutItemRequest.builder().tableName(item.table()).item(tombstone).conditionExpression(admits())
                .expressionAttributeNames(Map.of("#f", fenceAttribute)).expressionAttributeValues(Map.of(":f", encoded(fence)))
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD).build();
        return observed(item, "delete", fence, chain -> attempt(chain, item, fence, () -> client.putItem(write).thenApply(r -> null),
                seen -> null));
    }

    /**
     * Sends {@code write}; on a failed condition learns the item and answers {@code Stale} if the rule refuses its
     * fence, else what {@code otherwise} says of it (null: the write is admissible now, so it is sent again).
     */
    private CompletionStage<WriteOutcome> attempt(Bounded<WriteOutcome> chain, ItemKey item, FenceToken fence,
            java.util.function.Supplier<CompletableFuture<Void>> write,
            Function<Map<String, AttributeValue>, WriteOutcome> otherwise) {
        return attempt(chain, item, fence, write, otherwise, ATTEMPTS);
    }

    private CompletionStage<WriteOutcome> attempt(Bounded<WriteOutcome> chain, ItemKey item, FenceToken fence,
            java.util.function.Supplier<CompletableFuture<Void>> write,
            Function<Map<String, AttributeValue>, WriteOutcome> otherwise, int attemptsLeft) {
        return chain.send(write).handle((done, error) -> {
            if (error == null) {
                return CompletableFuture.<WriteOutcome>completedFuture(new WriteOutcome.Applied(item.toString(), fence.value()));
            }
            if (!DynamoDbErrors.isConditionFailed(error)) {
                return CompletableFuture.<WriteOutcome>failedFuture(error);
            }
            return refused(chain, item, error).thenCompose(seen -> {
                if (seen != null && !rule.admits(fence, stored(seen))) {
                    return CompletableFuture.completedFuture(rule.stale(item.toString(), fence, stored(seen)));
                }
                WriteOutcome outcome = otherwise.apply(seen);
                if (outcome != null) {
                    return CompletableFuture.completedFuture(outcome);
                }
                if (attemptsLeft <= 1) {
                    throw contended(item, "write");
                }
                return attempt(chain, item, fence, write, otherwise, attemptsLeft - 1);
            });
        }).thenCompose(stage -> stage);
    }

    /** The item as the failed condition saw it: sent back with the failure where DynamoDB does, else one consistent read. */
    private CompletionStage<Map<String, AttributeValue>> refused(Bounded<WriteOutcome> chain, ItemKey item, Throwable error) {
        ConditionalCheckFailedException failed = (ConditionalCheckFailedException) Stages.unwrap(error);
        if (failed.hasItem() && !failed.item().isEmpty()) {
            return CompletableFuture.completedFuture(failed.item());
        }
        GetItemRequest get = GetItemRequest.builder().tableName(item.table()).key(item.key()).consistentRead(true).build();
        return chain.send(() -> client.getItem(get)).thenApply(r -> r.hasItem() && !r.item().isEmpty() ? r.item() : null);
    }

    private CompletionStage<WriteOutcome> observed(ItemKey item, String operation, FenceToken fence,
            Function<Bounded<WriteOutcome>, CompletionStage<WriteOutcome>> body) {
        return rule.observeAsync(item.table(), operation, fence, () -> Bounded.run(timeout, item.toString(), operation, body));
    }

    private String admits() {
        return "(attribute_not_exists(#f) OR #f " + (rule.policy() == FencePolicy.STRICTLY_NEWER ? "<" : "<=") + " :f)";
    }

    private Map<String, String> names(ItemKey item) {
        Map<String, String> names = new HashMap<>();
        names.put("#f", fenceAttribute);
        names.put("#d", deletedAttribute);
        names.put("#k", item.key().keySet().iterator().next());
        return names;
    }

    private AttributeValue encoded(FenceToken fence) {
        Object value = rule.encode(fence);
        return value instanceof Long n ? Attributes.n(n) : AttributeValue.fromS(value.toString());
    }

    private long stored(Map<String, AttributeValue> seen) {
        AttributeValue v = seen.get(fenceAttribute);
        if (v == null) {
            return 0;
        }
        return WriteRule.decode(v.n() != null ? (Object) Long.valueOf(v.n()) : v.s());
    }

    private boolean deleted(Map<String, AttributeValue> seen) {
        AttributeValue v = seen.get(deletedAttribute);
        return v != null && Boolean.TRUE.equals(v.bool());
    }

    private WriteOutcome notFound(ItemKey item) {
        return new WriteOutcome.NotFound(item.toString());
    }

    private FenceGuardException contended(ItemKey item, String operation) {
        return new FenceGuardException(ErrorCode.UNAVAILABLE, item.toString(), operation + " lost " + ATTEMPTS
                + " races to other writers of the item; nothing was written by this call");
    }

    private void check(ItemKey item, FenceToken fence) {
        Objects.requireNonNull(item, "item");
        Objects.requireNonNull(fence, "fence");
        if (lockTables.contains(item.table())) {
            throw new IllegalArgumentException("item " + item + " is in the lock table '" + item.table()
                    + "': a fenced write there could rewind a lock's fence or take over a lock; lock tables are " + lockTables);
        }
        for (String name : item.key().keySet()) {
            if (name.equals(fenceAttribute) || name.equals(deletedAttribute)) {
                throw new IllegalArgumentException("the key attribute '" + name + "' of " + item + " is the fence or deleted attribute");
            }
        }
    }

    private Map<String, AttributeValue> data(ItemKey item, FenceToken fence, Map<String, ?> values, String operation) {
        check(item, fence);
        Map<String, AttributeValue> data = Attributes.ofMap("values", values);
        if (data.isEmpty()) {
            throw new IllegalArgumentException(operation + " of " + item + " needs at least one attribute in values");
        }
        for (String name : data.keySet()) {
            if (name.equals(fenceAttribute) || name.equals(deletedAttribute)) {
                throw new IllegalArgumentException("values must not name the fence attribute '" + fenceAttribute
                        + "' or the deleted attribute '" + deletedAttribute + "', named '" + name + "' (" + item + ")");
            }
            if (item.key().containsKey(name)) {
                throw new IllegalArgumentException("values must not name the key attribute '" + name + "' of " + item
                        + ": the key comes from the ItemKey");
            }
        }
        return data;
    }

    @Override
    public String toString() {
        return "AsyncFencedDynamoDb[" + rule.policy() + ", fence " + fenceAttribute + "]";
    }
}
