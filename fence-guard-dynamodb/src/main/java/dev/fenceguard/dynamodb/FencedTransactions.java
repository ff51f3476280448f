package dev.fenceguard.dynamodb;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.Stages;
import dev.fenceguard.dynamodb.internal.DynamoDbErrors;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ConditionCheck;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.Update;

/**
 * The fence part of a caller's {@code TransactWriteItems}, behind {@link AsyncFencedDynamoDb#transactUpdate} and its
 * siblings: the fenced item's action, built from the caller's own {@code Update} or {@code Put} with the write rule
 * added (the same condition text and fence encoding as the single-item writes, under placeholders of its own), and
 * the outcome read from the transaction's answer.
 */
final class FencedTransactions {

    /** Placeholders of fence-guard's part; the caller's expressions must not use them. */
    static final String FENCE = "#fgFence";
    static final String DELETED = "#fgDeleted";
    static final String KEY = "#fgKey";
    static final String VALUE = ":fgFence";
    private static final Set<String> RESERVED = Set.of(FENCE, DELETED, KEY, VALUE);
    /** The SET keyword of an update expression: a word of its own (not a placeholder, a path element or part of a name). */
    private static final Pattern SET = Pattern.compile("(?i)(?<![\\w#:.\\]])SET(?![\\w])");
    /** Cancellation reasons worth a retry of the whole transaction. */
    private static final Set<String> BUSY = Set.of("TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded",
            "RequestLimitExceeded");

    private final AsyncFencedDynamoDb fenced;
    private final DynamoDbAsyncClient client;
    private final String fenceAttribute;
    private final String deletedAttribute;
    private final List<String> lockTables;

    FencedTransactions(AsyncFencedDynamoDb fenced, DynamoDbAsyncClient client, String fenceAttribute, String deletedAttribute,
            List<String> lockTables) {
        this.fenced = fenced;
        this.client = client;
        this.fenceAttribute = fenceAttribute;
        this.deletedAttribute = deletedAttribute;
        this.lockTables = lockTables;
    }

    TransactWriteItem update(ItemKey item, FenceToken fence, Update update) {
        fenced.check(item, fence);
        Objects.requireNonNull(update, "update");
        String table = table(item, update.tableName(), "Update");
        if (update.hasKey() && !update.key().equals(item.key())) {
            throw new IllegalArgumentException("the Update's key is not the key of " + item
                    + ": transactUpdate fences the Update of the fenced item itself; guard another item with transactConditionCheck");
        }
        Map<String, String> names = names(update.expressionAttributeNames(), "Update");
        Map<String, AttributeValue> values = values(update.expressionAttributeValues(), "Update");
        String expression = update.updateExpression();
        String set = FENCE + " = " + VALUE;
        if (expression == null || expression.isBlank()) {
            expression = "SET " + set;
        } else {
            for (String attribute : List.of(fenceAttribute, deletedAttribute)) {
                if (Pattern.compile("(?<![\\w#:.\\]])" + Pattern.quote(attribute) + "(?![\\w])").matcher(expression).find()) {
                    throw new IllegalArgumentException("the update expression names the " + (attribute.equals(fenceAttribute) ? "fence" : "deleted")
                            + " attribute '" + attribute + "' of " + item + ": fence-guard writes it");
                }
            }
            Matcher m = SET.matcher(expression);
            expression = m.find() ? expression.substring(0, m.end()) + " " + set + "," + expression.substring(m.end())
                    : "SET " + set + " " + expression;
        }
        names.put(FENCE, fenceAttribute);
        names.put(DELETED, deletedAttribute);
        names.put(KEY, item.key().keySet().iterator().next());
        values.put(VALUE, fenced.encoded(fence));
        String condition = AsyncFencedDynamoDb.live(KEY, DELETED) + " AND " + fenced.admits(FENCE, VALUE) + and(update.conditionExpression());
        return TransactWriteItem.builder().update(update.toBuilder().tableName(table).key(item.key()).updateExpression(expression)
                .conditionExpression(condition).expressionAttributeNames(names).expressionAttributeValues(values)
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD).build()).build();
    }

    TransactWriteItem put(ItemKey item, FenceToken fence, Put put) {
        fenced.check(item, fence);
        Objects.requireNonNull(put, "put");
        String table = table(item, put.tableName(), "Put");
        Map<String, AttributeValue> whole = new LinkedHashMap<>(item.key());
        if (put.hasItem()) {
            put.item().forEach((name, value) -> {
                if (name.equals(fenceAttribute) || name.equals(deletedAttribute)) {
                    throw new IllegalArgumentException("the Put's item must not hold the fence attribute '" + fenceAttribute
                            + "' or the deleted attribute '" + deletedAttribute + "', held '" + name + "' (" + item + ")");
                }
                AttributeValue key = item.key().get(name);
                if (key != null && !key.equals(value)) {
                    throw new IllegalArgumentException("the Put's item has another value of the key attribute '" + name + "' than "
                            + item + ": transactPut fences the Put of the fenced item itself");
                }
                whole.put(name, value);
            });
        }
        whole.put(fenceAttribute, fenced.encoded(fence));
        Map<String, String> names = names(put.expressionAttributeNames(), "Put");
        Map<String, AttributeValue> values = values(put.expressionAttributeValues(), "Put");
        names.put(FENCE, fenceAttribute);
        values.put(VALUE, fenced.encoded(fence));
        return TransactWriteItem.builder().put(put.toBuilder().tableName(table).item(whole)
                .conditionExpression(fenced.admits(FENCE, VALUE) + and(put.conditionExpression()))
                .expressionAttributeNames(names).expressionAttributeValues(values)
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD).build()).build();
    }

    TransactWriteItem delete(ItemKey item, FenceToken fence) {
        fenced.check(item, fence);
        Map<String, AttributeValue> tombstone = new LinkedHashMap<>(item.key());
        tombstone.put(fenceAttribute, fenced.encoded(fence));
        tombstone.put(deletedAttribute, AttributeValue.fromBool(true));
        return TransactWriteItem.builder().put(Put.builder().tableName(item.table()).item(tombstone)
                .conditionExpression(fenced.admits(FENCE, VALUE)).expressionAttributeNames(Map.of(FENCE, fenceAttribute))
                .expressionAttributeValues(Map.of(VALUE, fenced.encoded(fence)))
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD).build()).build();
    }

    TransactWriteItem conditionCheck(ItemKey item, FenceToken fence) {
        fenced.check(item, fence);
        return TransactWriteItem.builder().conditionCheck(ConditionCheck.builder().tableName(item.table()).key(item.key())
                .conditionExpression(fenced.admits(FENCE, VALUE)).expressionAttributeNames(Map.of(FENCE, fenceAttribute))
                .expressionAttributeValues(Map.of(VALUE, fenced.encoded(fence)))
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD).build()).build();
    }

    CompletionStage<WriteOutcome> write(TransactWriteItemsRequest request, ItemKey item, FenceToken fence) {
        fenced.check(item, fence);
        Objects.requireNonNull(request, "request");
        if (!request.hasTransactItems() || request.transactItems().isEmpty()) {
            throw new IllegalArgumentException("the request has no transactItems");
        }
        List<TransactWriteItem> actions = request.transactItems();
        int index = -1;
        for (int i = 0; i < actions.size(); i++) {
            if (targets(Objects.requireNonNull(actions.get(i), "transactItems[" + i + "]"), i, item)) {
                if (index >= 0) {
                    throw new IllegalArgumentException("transactItems[" + index + "] and [" + i + "] both act on " + item
                            + ": DynamoDB allows one action per item in a transaction");
                }
                index = i;
            }
        }
        if (index < 0) {
            throw new IllegalArgumentException("the request has no action on " + item
                    + ": add transactUpdate, transactPut, transactDelete or transactConditionCheck of it");
        }
        boolean live = requireFenced(actions.get(index), index, item, fence);
        int at = index;
        return fenced.observed(item, "transaction", fence, chain -> chain.send(() -> client.transactWriteItems(request))
                .handle((done, error) -> {
                    if (error == null) {
                        return CompletableFuture.<WriteOutcome>completedFuture(new WriteOutcome.Applied(item.toString(), fence.value()));
                    }
                    if (!(Stages.unwrap(error) instanceof TransactionCanceledException canceled)) {
                        return CompletableFuture.<WriteOutcome>failedFuture(error);
                    }
                    List<CancellationReason> reasons = canceled.hasCancellationReasons() ? canceled.cancellationReasons() : List.of();
                    CancellationReason own = at < reasons.size() ? reasons.get(at) : null;
                    if (own != null && !"ConditionalCheckFailed".equals(own.code())) {
                        throw canceled(canceled, reasons, at, item, "the fenced item's action was cancelled with " + own.code());
                    }
                    // the fence's condition failed, or no reasons came back: the item as the condition saw it decides
                    CompletionStage<Map<String, AttributeValue>> seen = own != null && own.hasItem() && !own.item().isEmpty()
                            ? CompletableFuture.completedFuture(own.item()) : fenced.read(chain, item);
                    return seen.thenApply(s -> {
                        WriteOutcome outcome = fenced.judge(item, fence, s, live);
                        if (outcome == null) {
                            throw canceled(canceled, reasons, at, item, own == null
                                    ? "DynamoDB sent no cancellation reasons, and the fenced item's fence admits this one"
                                    : "the fenced item's condition failed, but not its fence part: a condition of yours refused it");
                        }
                        return outcome;
                    });
                }).thenCompose(stage -> stage));
    }

    private static FencedTransactionCanceledException canceled(TransactionCanceledException canceled, List<CancellationReason> reasons,
            int index, ItemKey item, String why) {
        List<String> codes = new ArrayList<>();
        ErrorCode code = ErrorCode.INVALID_ARGUMENT;
        for (CancellationReason r : reasons) {
            codes.add(r.code());
            if (BUSY.contains(r.code())) {
                code = ErrorCode.UNAVAILABLE;
            }
        }
        return new FencedTransactionCanceledException(code, item.toString(), "transaction cancelled, not by the fence: " + why
                + "; reasons by item " + codes + ", the fenced item is transactItems[" + index + "] (cancellationReasons() has them)",
                DynamoDbErrors.redacted(canceled), reasons, index);
    }

    /** Whether {@code action} acts on {@code item}; refuses an action on a lock table or with no action. */
    private boolean targets(TransactWriteItem action, int i, ItemKey item) {
        String table;
        Map<String, AttributeValue> key;
        if (action.update() != null) {
            table = action.update().tableName();
            key = action.update().key();
        } else if (action.put() != null) {
            table = action.put().tableName();
            Map<String, AttributeValue> projected = new HashMap<>();
            if (action.put().hasItem()) {
                item.key().keySet().forEach(name -> {
                    AttributeValue v = action.put().item().get(name);
                    if (v != null) {
                        projected.put(name, v);
                    }
                });
            }
            key = projected;
        } else if (action.delete() != null) {
            table = action.delete().tableName();
            key = action.delete().key();
        } else if (action.conditionCheck() != null) {
            table = action.conditionCheck().tableName();
            key = action.conditionCheck().key();
        } else {
            throw new IllegalArgumentException("transactItems[" + i + "] has no action (Update, Put, Delete or ConditionCheck)");
        }
        if (table != null && lockTables.contains(table)) {
            throw new IllegalArgumentException("transactItems[" + i + "] acts on the lock table '" + table
                    + "': a write there could rewind a lock's fence or take over a lock; lock tables are " + lockTables);
        }
        return item.table().equals(table) && item.key().equals(key);
    }

    /** Checks that the fenced item's action carries this fence's condition; true if it needs a live item (an update). */
    private boolean requireFenced(TransactWriteItem action, int i, ItemKey item, FenceToken fence) {
        if (action.delete() != null) {
            throw new IllegalArgumentException("transactItems[" + i + "] deletes " + item + ": a fenced delete keeps the fence on a"
                    + " tombstone, use transactDelete");
        }
        Map<String, String> names = action.update() != null ? action.update().expressionAttributeNames()
                : action.put() != null ? action.put().expressionAttributeNames() : action.conditionCheck().expressionAttributeNames();
        Map<String, AttributeValue> values = action.update() != null ? action.update().expressionAttributeValues()
                : action.put() != null ? action.put().expressionAttributeValues() : action.conditionCheck().expressionAttributeValues();
        String condition = action.update() != null ? action.update().conditionExpression()
                : action.put() != null ? action.put().conditionExpression() : action.conditionCheck().conditionExpression();
        boolean carries = fenceAttribute.equals(names.get(FENCE)) && condition != null && condition.contains(fenced.admits(FENCE, VALUE));
        if (!carries) {
            throw new IllegalArgumentException("transactItems[" + i + "] acts on " + item + " without this fence's condition: build it"
                    + " with transactUpdate, transactPut, transactDelete or transactConditionCheck of these fenced writes");
        }
        if (!fenced.encoded(fence).equals(values.get(VALUE))) {
            throw new IllegalArgumentException("transactItems[" + i + "] carries another fence than " + fence + " for " + item
                    + ": build it and run the transaction with the same fence");
        }
        return action.update() != null;
    }

    private static String table(ItemKey item, String table, String what) {
        if (table != null && !table.equals(item.table())) {
            throw new IllegalArgumentException("the " + what + "'s table '" + table + "' is not the table of " + item);
        }
        return item.table();
    }

    private Map<String, String> names(Map<String, String> given, String what) {
        Map<String, String> names = new HashMap<>(given);
        names.forEach((placeholder, name) -> {
            if (RESERVED.contains(placeholder)) {
                throw new IllegalArgumentException("the " + what + " uses the placeholder " + placeholder + ", which fence-guard's part uses");
            }
            if (name.equals(fenceAttribute) || name.equals(deletedAttribute)) {
                throw new IllegalArgumentException("the " + what + "'s placeholder " + placeholder + " names the "
                        + (name.equals(fenceAttribute) ? "fence" : "deleted") + " attribute '" + name + "': fence-guard writes it");
            }
        });
        return names;
    }

    private static Map<String, AttributeValue> values(Map<String, AttributeValue> given, String what) {
        if (given.containsKey(VALUE)) {
            throw new IllegalArgumentException("the " + what + " uses the placeholder " + VALUE + ", which fence-guard's part uses");
        }
        return new HashMap<>(given);
    }

    private static String and(String condition) {
        return condition == null || condition.isBlank() ? "" : " AND (" + condition + ")";
    }
}
