package dev.fenceguard.dynamodb;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceEncoding;
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
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.Update;
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
 * <p><b>Your own transaction.</b> The {@code transact*} methods build the fenced item's action of a
 * {@code TransactWriteItems} of yours with the same condition text and fence encoding, under placeholders of their own
 * ({@code #fgFence}, {@code #fgDeleted}, {@code #fgKey}, {@code :fgFence}); {@link #transactWriteItems} sends it once
 * and reads the cancellation reason at the fenced item's index (see {@link FencedDynamoDb#transactWriteItems}).
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
    private final FencedTransactions transactions;

    AsyncFencedDynamoDb(DynamoDbAsyncClient client, WriteRule rule, String fenceAttribute, String deletedAttribute,
            List<String> lockTables, Duration timeout, String warmUpTable) {
        this.client = client;
        this.rule = rule;
        this.fenceAttribute = fenceAttribute;
        this.deletedAttribute = deletedAttribute;
        this.lockTables = lockTables;
        this.timeout = timeout;
        this.warmUpTable = warmUpTable;
        this.transactions = new FencedTransactions(this, client, fenceAttribute, deletedAttribute, lockTables);
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
                .updateExpression(set.toString()).conditionExpression(live("#k", "#d") + " AND " + admits())
                .expressionAttributeNames(names).expressionAttributeValues(vals)
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD).build();
        return observed(item, "update", fence, chain -> attempt(chain, item, fence, () -> client.updateItem(write).thenApply(r -> null),
                true));
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
                false));
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
                .updateExpression("SET #f = :f").conditionExpression(live("#k", "#d") + " AND " + admits())
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
                if (seen != null && !rule.admits(fence, stored(item, seen))) {
                    return CompletableFuture.completedFuture(rule.stale(item.toString(), fence, stored(item, seen)));
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
                false));
    }

    /**
     * {@link FencedDynamoDb#transactUpdate(ItemKey, FenceToken, Update)}: builds no stage, does no I/O.
     *
     * @since 0.1
     */
    public TransactWriteItem transactUpdate(ItemKey item, FenceToken fence, Update update) {
        return transactions.update(item, fence, update);
    }

    /**
     * {@link FencedDynamoDb#transactUpdate(ItemKey, FenceToken, Consumer)}: builds no stage, does no I/O.
     *
     * @since 0.1
     */
    public TransactWriteItem transactUpdate(ItemKey item, FenceToken fence, Consumer<Update.Builder> update) {
        return transactUpdate(item, fence, Update.builder().applyMutation(Objects.requireNonNull(update, "update")).build());
    }

    /**
     * {@link FencedDynamoDb#transactPut(ItemKey, FenceToken, Put)}: builds no stage, does no I/O.
     *
     * @since 0.1
     */
    public TransactWriteItem transactPut(ItemKey item, FenceToken fence, Put put) {
        return transactions.put(item, fence, put);
    }

    /**
     * {@link FencedDynamoDb#transactPut(ItemKey, FenceToken, Consumer)}: builds no stage, does no I/O.
     *
     * @since 0.1
     */
    public TransactWriteItem transactPut(ItemKey item, FenceToken fence, Consumer<Put.Builder> put) {
        return transactPut(item, fence, Put.builder().applyMutation(Objects.requireNonNull(put, "put")).build());
    }

    /**
     * {@link FencedDynamoDb#transactDelete}: builds no stage, does no I/O.
     *
     * @since 0.1
     */
    public TransactWriteItem transactDelete(ItemKey item, FenceToken fence) {
        return transactions.delete(item, fence);
    }

    /**
     * {@link FencedDynamoDb#transactConditionCheck}: builds no stage, does no I/O.
     *
     * @since 0.1
     */
    public TransactWriteItem transactConditionCheck(ItemKey item, FenceToken fence) {
        return transactions.conditionCheck(item, fence);
    }

    /**
     * {@link FencedDynamoDb#transactWriteItems} without waiting.
     *
     * @return a stage of {@code Applied}, {@code Stale(stored)} or {@code NotFound}; it fails with a
     *     {@link FencedTransactionCanceledException} if DynamoDB cancelled the transaction for another reason than the fence
     * @throws IllegalArgumentException as {@link FencedDynamoDb#transactWriteItems}, before any I/O
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public CompletionStage<WriteOutcome> transactWriteItems(TransactWriteItemsRequest request, ItemKey item, FenceToken fence) {
        return transactions.write(request, item, fence);
    }

    /**
     * Sends {@code write}; on a failed condition learns the item and answers what {@link #judge} says of it
     * (null: the write is admissible now, so it is sent again).
     */
    private CompletionStage<WriteOutcome> attempt(Bounded<WriteOutcome> chain, ItemKey item, FenceToken fence,
            Supplier<CompletableFuture<Void>> write, boolean live) {
        return attempt(chain, item, fence, write, live, ATTEMPTS);
    }

    private CompletionStage<WriteOutcome> attempt(Bounded<WriteOutcome> chain, ItemKey item, FenceToken fence,
            Supplier<CompletableFuture<Void>> write, boolean live, int attemptsLeft) {
        return chain.send(write).handle((done, error) -> {
            if (error == null) {
                return CompletableFuture.<WriteOutcome>completedFuture(new WriteOutcome.Applied(item.toString(), fence.value()));
            }
            if (!DynamoDbErrors.isConditionFailed(error)) {
                return CompletableFuture.<WriteOutcome>failedFuture(error);
            }
            return refused(chain, item, error).thenCompose(seen -> {
                WriteOutcome outcome = judge(item, fence, seen, live);
                if (outcome != null) {
                    return CompletableFuture.completedFuture(outcome);
                }
                if (attemptsLeft <= 1) {
                    throw contended(item, "write");
                }
                return attempt(chain, item, fence, write, live, attemptsLeft - 1);
            });
        }).thenCompose(stage -> stage);
    }

    /**
     * What a refused write's item says: {@code Stale} if the rule refuses its fence; {@code NotFound} if the write
     * needs a live item ({@code live}) and it is absent or a tombstone; null if neither (the refusal was not the fence's).
     *
     * @throws FenceGuardException {@code INVALID_ARGUMENT} if the item's fence is not stored in this encoding
     */
    WriteOutcome judge(ItemKey item, FenceToken fence, Map<String, AttributeValue> seen, boolean live) {
        if (seen != null) {
            long stored = stored(item, seen);
            if (!rule.admits(fence, stored)) {
                return rule.stale(item.toString(), fence, stored);
            }
        }
        return live && (seen == null || deleted(seen)) ? notFound(item) : null;
    }

    /** The item as the failed condition saw it: sent back with the failure where DynamoDB does, else one consistent read. */
    private CompletionStage<Map<String, AttributeValue>> refused(Bounded<WriteOutcome> chain, ItemKey item, Throwable error) {
        ConditionalCheckFailedException failed = (ConditionalCheckFailedException) Stages.unwrap(error);
        if (failed.hasItem() && !failed.item().isEmpty()) {
            return CompletableFuture.completedFuture(failed.item());
        }
        return read(chain, item);
    }

    /** The item, strongly consistent; null if absent. */
    CompletionStage<Map<String, AttributeValue>> read(Bounded<WriteOutcome> chain, ItemKey item) {
        GetItemRequest get = GetItemRequest.builder().tableName(item.table()).key(item.key()).consistentRead(true).build();
        return chain.send(() -> client.getItem(get)).thenApply(r -> r.hasItem() && !r.item().isEmpty() ? r.item() : null);
    }

    CompletionStage<WriteOutcome> observed(ItemKey item, String operation, FenceToken fence,
            Function<Bounded<WriteOutcome>, CompletionStage<WriteOutcome>> body) {
        return rule.observeAsync(item.table(), operation, fence, () -> Bounded.run(timeout, item.toString(), operation, body));
    }

    private String admits() {
        return admits("#f", ":f");
    }

    /** The write rule as a condition on the fence attribute named {@code name}, against the fence in {@code value}. */
    String admits(String name, String value) {
        return "(attribute_not_exists(" + name + ") OR " + name + (rule.policy() == FencePolicy.STRICTLY_NEWER ? " < " : " <= ")
                + value + ")";
    }

    /** The item exists ({@code key}: a key attribute's placeholder) and is not a tombstone ({@code deleted}'s placeholder). */
    static String live(String key, String deleted) {
        return "attribute_exists(" + key + ") AND attribute_not_exists(" + deleted + ")";
    }

    private Map<String, String> names(ItemKey item) {
        Map<String, String> names = new HashMap<>();
        names.put("#f", fenceAttribute);
        names.put("#d", deletedAttribute);
        names.put("#k", item.key().keySet().iterator().next());
        return names;
    }

    AttributeValue encoded(FenceToken fence) {
        Object value = rule.encode(fence);
        return value instanceof Long n ? Attributes.n(n) : AttributeValue.fromS(value.toString());
    }

    /**
     * The fence {@code seen} holds (0 without one). A fence of the other type (a number under {@code TEXT}, text under
     * {@code INTEGER}) or text that is no fence is a misconfiguration, not a refusal: DynamoDB compares values of
     * different types as neither smaller nor equal, so every fenced write to the item would fail its condition for good.
     */
    long stored(ItemKey item, Map<String, AttributeValue> seen) {
        AttributeValue v = seen.get(fenceAttribute);
        if (v == null) {
            return 0;
        }
        boolean text = rule.encoding() == FenceEncoding.TEXT;
        String expected = text ? "S" : "N";
        if (text ? v.s() == null : v.n() == null) {
            throw new FenceGuardException(ErrorCode.INVALID_ARGUMENT, item.toString(), "the fence attribute '" + fenceAttribute
                    + "' of the item is of type " + v.type() + ", but these fenced writes store fences as " + rule.encoding() + " (type "
                    + expected + "; FenceGuardDynamoDb.Builder.withEncoding): DynamoDB compares values of different types as neither"
                    + " smaller nor equal, so no fenced write passes on this item until the encodings agree; nothing was written");
        }
        try {
            return WriteRule.decode(text ? v.s() : (Object) Long.valueOf(v.n()));
        } catch (IllegalStateException | NumberFormatException e) {
            throw new FenceGuardException(ErrorCode.INVALID_ARGUMENT, item.toString(), "the fence attribute '" + fenceAttribute
                    + "' of the item holds no fence: " + (text ? "15 digits" : "a whole number up to " + FenceToken.MAX_VALUE)
                    + " expected (value withheld); nothing was written");
        }
    }

    boolean deleted(Map<String, AttributeValue> seen) {
        AttributeValue v = seen.get(deletedAttribute);
        return v != null && Boolean.TRUE.equals(v.bool());
    }

    WriteOutcome notFound(ItemKey item) {
        return new WriteOutcome.NotFound(item.toString());
    }

    private FenceGuardException contended(ItemKey item, String operation) {
        return new FenceGuardException(ErrorCode.UNAVAILABLE, item.toString(), operation + " lost " + ATTEMPTS
                + " races to other writers of the item; nothing was written by this call");
    }

    void check(ItemKey item, FenceToken fence) {
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
