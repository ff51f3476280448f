package dev.fenceguard.dynamodb;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.dynamodb.internal.DynamoDbErrors;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.Update;

/**
 * Fenced writes to DynamoDB items: each is one conditional write that changes the data and the item's
 * fence attribute ({@code _fence}, a number by default or the 15-character text form) only if the
 * {@link dev.fenceguard.core.FencePolicy} admits the presented fence; a missing fence counts as 0. Get one
 * from {@link FenceGuardDynamoDb#fencedWrites()}.
 *
 * <pre>{@code
 * FencedDynamoDb fenced = FenceGuardDynamoDb.builder(client).build().fencedWrites();
 * ItemKey order = ItemKey.of("orders", "id", "42");
 * WriteOutcome paid = fenced.update(order, lease.fence(), Map.of("status", "paid"));
 * }</pre>
 *
 * <p><b>Two faces.</b> Every call here is a wait on {@link #async()}, bounded by the call timeout
 * ({@link FenceGuardDynamoDb.Builder#withCallTimeout}); see {@link AsyncFencedDynamoDb} for how a write runs.
 *
 * <p><b>Values.</b> Attributes are a {@code Map<String, ?>} of {@code AttributeValue}s or plain values
 * ({@code String}, {@code Number}, {@code Boolean}, bytes), copied when the call is made.
 *
 * <p><b>Tombstones.</b> A deleted item is replaced by a tombstone {@code {key, _fence: f, _deleted: true}}
 * that keeps the fence, so a zombie's {@link #put} cannot bring it back; your reads should skip items with
 * {@code _deleted}. A fenced delete of an item that never existed writes a tombstone too, and so does a
 * {@link #claim} of an absent item. Once an item has seen fence {@code f}, no call here with an older fence
 * changes it. Do not give tombstones a DynamoDB TTL shorter than the longest a writer may pause
 * (docs/dynamodb.md).
 *
 * <p><b>Your own transaction.</b> {@link #transactUpdate}, {@link #transactPut}, {@link #transactDelete} and
 * {@link #transactConditionCheck} build the fenced item's action for a {@code TransactWriteItems} of yours (from your
 * own {@code Update} or {@code Put} where the transaction writes the item, a {@code ConditionCheck} where it does not),
 * with the same rule and fence encoding as the writes above; {@link #transactWriteItems} runs the transaction and
 * reads its outcome: {@code Applied}, {@code Stale}, {@code NotFound}, or a {@link FencedTransactionCanceledException}
 * when something else than the fence cancelled it.
 *
 * <p><b>Lock items are not resources.</b> Every call refuses an item of the lock table (and of the tables
 * named with {@link FenceGuardDynamoDb.Builder#withOtherLockTables}) with an {@link IllegalArgumentException}
 * before any I/O.
 *
 * <p>Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class FencedDynamoDb {

    private final AsyncFencedDynamoDb async;

    FencedDynamoDb(AsyncFencedDynamoDb async) {
        this.async = async;
    }

    /**
     * The non-blocking face of these writes: the same calls, each returning a {@code CompletionStage} at
     * once. The blocking calls here wait on it.
     *
     * @since 0.1
     */
    public AsyncFencedDynamoDb async() {
        return async;
    }

    /**
     * Gets these writes ready for their first call: strongly consistent reads of the item {@code warm-up} of
     * the lock table (no lock key maps to it, and nothing writes it), which open the HTTP connection and load
     * the SDK's request path, and a first handling of each outcome. Writes nothing. Bounded by the call timeout.
     *
     * @throws dev.fenceguard.core.FenceGuardException {@code UNAVAILABLE} if DynamoDB cannot be reached,
     *     {@code TIMEOUT} if it does not answer within the call timeout
     * @since 0.1
     */
    public void warmUp() {
        DynamoDbErrors.join(async.warmUp(), null, "warm-up");
    }

    /**
     * Updates attributes of an existing, not deleted item if the policy admits {@code fence}: one
     * {@code UpdateItem} conditioned on the item existing, not being a tombstone, and the rule. Never creates
     * an item or a tombstone.
     *
     * @return {@code Applied}; {@code Stale(stored)} if the policy refuses {@code fence} (a tombstone's fence
     *     counts); {@code NotFound} if the item does not exist or is a tombstone the policy admits {@code fence} against
     * @throws IllegalArgumentException if {@code values} is empty, names the fence, deleted or a key attribute,
     *     holds a value of an unsupported type, or if {@code item} is in a lock table, before any I/O
     * @throws NullPointerException if an argument is null
     * @throws dev.fenceguard.core.FenceGuardException if DynamoDB fails or does not answer within the call
     *     timeout ({@code TIMEOUT}; the write may still have been applied)
     * @since 0.1
     */
    public WriteOutcome update(ItemKey item, FenceToken fence, Map<String, ?> values) {
        return wait(async.update(item, fence, values), item, "update");
    }

    /**
     * Creates or replaces the whole item ({@code PutItem}) if the policy admits {@code fence}. A tombstone is
     * replaced (the item comes back) only by an admitted fence.
     *
     * @return {@code Applied}, or {@code Stale(stored)} (a tombstone's fence counts)
     * @throws IllegalArgumentException as {@link #update}, before any I/O
     * @throws NullPointerException if an argument is null
     * @throws dev.fenceguard.core.FenceGuardException as {@link #update}
     * @since 0.1
     */
    public WriteOutcome put(ItemKey item, FenceToken fence, Map<String, ?> values) {
        return wait(async.put(item, fence, values), item, "put");
    }

    /**
     * Records {@code fence} on the item without changing its data. Do this right after acquiring a lock and
     * <em>before</em> reading the item for a read-modify-write: from then on a zombie's write is refused. On an
     * absent or deleted item an admitted fence is recorded on its tombstone (created if the item never
     * existed; a second write) and the answer is {@code NotFound}.
     *
     * @return {@code Applied}; {@code Stale(stored)}; {@code NotFound} (absent or deleted; fence recorded on the tombstone)
     * @throws IllegalArgumentException if {@code item} is in a lock table, before any I/O
     * @throws NullPointerException if an argument is null
     * @throws dev.fenceguard.core.FenceGuardException as {@link #update}
     * @since 0.1
     */
    public WriteOutcome claim(ItemKey item, FenceToken fence) {
        return wait(async.claim(item, fence), item, "claim");
    }

    /**
     * Replaces the item by a tombstone holding {@code fence} ({@code PutItem}), if the policy admits it:
     * whether the item exists, is already a tombstone (its fence is raised) or never existed.
     *
     * @return {@code Applied} (the item reads as absent and its tombstone holds {@code fence}), or {@code Stale(stored)}
     * @throws IllegalArgumentException if {@code item} is in a lock table, before any I/O
     * @throws NullPointerException if an argument is null
     * @throws dev.fenceguard.core.FenceGuardException as {@link #update}
     * @since 0.1
     */
    public WriteOutcome delete(ItemKey item, FenceToken fence) {
        return wait(async.delete(item, fence), item, "delete");
    }

    /**
     * The fenced item's {@code Update} for your own {@code TransactWriteItems}: your {@code update} with the write rule
     * added, so that it applies, with the rest of your transaction, only if the policy admits {@code fence}. Its
     * condition becomes {@code attribute_exists(#fgKey) AND attribute_not_exists(#fgDeleted) AND
     * (attribute_not_exists(#fgFence) OR #fgFence <= :fgFence)}, {@code AND} your condition if it has one; its update
     * expression also sets the fence ({@code SET #fgFence = :fgFence}, in your {@code SET} clause if it has one; an
     * update with no expression only records the fence); it asks for the item a failed condition saw
     * ({@code ALL_OLD}). Its table and key are {@code item}'s (leave them unset, or set them to the same).
     *
     * <p>DynamoDB allows one action per item in a transaction, so this is the fenced item's only action; to fence a
     * transaction that does not write that item, use {@link #transactConditionCheck}. Run the transaction with
     * {@link #transactWriteItems} to get its outcome. No I/O.
     *
     * @return the action to put in {@code transactItems}
     * @throws IllegalArgumentException before any I/O if {@code item} is in a lock table; if {@code update} names
     *     another table or key, names the fence or deleted attribute (in its update expression or through a
     *     placeholder), or uses one of fence-guard's placeholders ({@code #fgFence}, {@code #fgDeleted}, {@code #fgKey},
     *     {@code :fgFence})
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public TransactWriteItem transactUpdate(ItemKey item, FenceToken fence, Update update) {
        return async.transactUpdate(item, fence, update);
    }

    /**
     * {@link #transactUpdate(ItemKey, FenceToken, Update)} with the {@code Update} built by {@code update}, the SDK's
     * consumer-builder form. No I/O.
     *
     * @throws IllegalArgumentException as {@link #transactUpdate(ItemKey, FenceToken, Update)}
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public TransactWriteItem transactUpdate(ItemKey item, FenceToken fence, Consumer<Update.Builder> update) {
        return async.transactUpdate(item, fence, update);
    }

    /**
     * The fenced item's {@code Put} for your own {@code TransactWriteItems}: your {@code put} of the whole item with
     * the fence added to it, conditioned on {@code (attribute_not_exists(#fgFence) OR #fgFence <= :fgFence)} ({@code AND}
     * yours), as {@link #put} does alone: a tombstone is replaced only by an admitted fence. The item's key attributes
     * come from {@code item} (leave them out, or give the same values). No I/O.
     *
     * @return the action to put in {@code transactItems}
     * @throws IllegalArgumentException before any I/O if {@code item} is in a lock table; if {@code put} names
     *     another table, another key value, holds the fence or deleted attribute, or uses one of fence-guard's placeholders
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public TransactWriteItem transactPut(ItemKey item, FenceToken fence, Put put) {
        return async.transactPut(item, fence, put);
    }

    /**
     * {@link #transactPut(ItemKey, FenceToken, Put)} with the {@code Put} built by {@code put}. No I/O.
     *
     * @throws IllegalArgumentException as {@link #transactPut(ItemKey, FenceToken, Put)}
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public TransactWriteItem transactPut(ItemKey item, FenceToken fence, Consumer<Put.Builder> put) {
        return async.transactPut(item, fence, put);
    }

    /**
     * {@link #delete} inside your own {@code TransactWriteItems}: a {@code Put} of the item's tombstone
     * {@code {key, _fence, _deleted: true}}, conditioned on the write rule. No I/O.
     *
     * @return the action to put in {@code transactItems}
     * @throws IllegalArgumentException if {@code item} is in a lock table, before any I/O
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public TransactWriteItem transactDelete(ItemKey item, FenceToken fence) {
        return async.transactDelete(item, fence);
    }

    /**
     * A {@code ConditionCheck} of {@code item}'s fence for your own {@code TransactWriteItems}, when the transaction
     * writes other items than the one that holds the fence: it passes if the policy admits {@code fence} against the
     * fence the item holds (0 if it has none or does not exist; a tombstone's counts). It writes nothing, so
     * {@link #claim} the item first under the same lease: from then on a newer holder's claim makes older fences fail
     * the check. No I/O.
     *
     * @return the action to put in {@code transactItems}
     * @throws IllegalArgumentException if {@code item} is in a lock table, before any I/O
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public TransactWriteItem transactConditionCheck(ItemKey item, FenceToken fence) {
        return async.transactConditionCheck(item, fence);
    }

    /**
     * Runs your {@code TransactWriteItems} whose action on {@code item} came from {@link #transactUpdate},
     * {@link #transactPut}, {@link #transactDelete} or {@link #transactConditionCheck} with the same {@code fence}, and
     * reads its outcome: one request, sent as you built it. On a cancellation whose reason at the fenced item's index is
     * {@code ConditionalCheckFailed}, the item the condition saw (sent back by DynamoDB, {@code ALL_OLD}; where it is not,
     * one strongly consistent read) decides: {@code Stale} if the policy refuses {@code fence} against its fence,
     * {@code NotFound} for a {@code transactUpdate} of an absent item or a tombstone. Any other cancellation (a condition
     * of yours, on another item or your part of this one's; a conflict; throttling) is a
     * {@link FencedTransactionCanceledException} naming every item's reason, never {@code Stale}. Not retried:
     * DynamoDB wrote nothing of a cancelled transaction, and whether to send it again is yours to decide.
     *
     * @return {@code Applied} (every action of the transaction took effect); {@code Stale(stored)}; {@code NotFound}
     *     (a {@code transactUpdate} of an absent or deleted item)
     * @throws IllegalArgumentException before any I/O if {@code item} is in a lock table or an action of the request
     *     is; if the request has no action on {@code item}, or more than one, or one not built by these fenced writes with
     *     this fence (a {@code Delete} of it included: fenced deletes leave a tombstone, use {@link #transactDelete})
     * @throws NullPointerException if an argument is null
     * @throws FencedTransactionCanceledException if DynamoDB cancelled the transaction for a reason other than the fence
     * @throws dev.fenceguard.core.FenceGuardException if DynamoDB fails otherwise or does not answer within the call
     *     timeout ({@code TIMEOUT}; the transaction may still have been applied)
     * @since 0.1
     */
    public WriteOutcome transactWriteItems(TransactWriteItemsRequest request, ItemKey item, FenceToken fence) {
        return wait(async.transactWriteItems(request, item, fence), item, "transaction");
    }

    private static WriteOutcome wait(CompletionStage<WriteOutcome> stage, ItemKey item, String operation) {
        return DynamoDbErrors.join(stage, Objects.toString(item), operation);
    }

    @Override
    public String toString() {
        return "FencedDynamoDb[" + async + "]";
    }
}
