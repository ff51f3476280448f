package dev.fenceguard.dynamodb;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import java.util.List;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;

/**
 * A transaction run by {@link FencedDynamoDb#transactWriteItems} that DynamoDB cancelled for a reason other than
 * the fence: a condition of yours (on another item, or your own part of the fenced item's condition), a conflict
 * with another transaction, throttling, a validation error. A cancellation by the fence is not an exception: it is
 * {@code WriteOutcome.Stale} (or {@code NotFound}). Nothing of the transaction was written.
 *
 * <p>{@link #code()} is {@code UNAVAILABLE} when a reason is worth retrying the whole transaction
 * ({@code TransactionConflict}, {@code ThrottlingError}, {@code ProvisionedThroughputExceeded},
 * {@code RequestLimitExceeded}), else {@code INVALID_ARGUMENT}: the transaction as sent cannot pass as things stand.
 * The message names each item's reason code by its index; {@link #cancellationReasons()} has DynamoDB's reasons
 * themselves, with the item each failed condition saw where you asked for it
 * ({@code ReturnValuesOnConditionCheckFailure.ALL_OLD}). As for every {@link FenceGuardException}, neither the message
 * nor the cause chain carries the service's text or your items; the reasons do, so log them with care.
 *
 * @since 0.1
 */
public final class FencedTransactionCanceledException extends FenceGuardException {

    private static final long serialVersionUID = 1L;

    /** Not serialized: the SDK's reasons hold items, and stay in the process that received them. */
    private final transient List<CancellationReason> reasons;
    private final int fencedItemIndex;

    FencedTransactionCanceledException(ErrorCode code, String item, String message, Throwable cause, List<CancellationReason> reasons,
            int fencedItemIndex) {
        super(code, item, message, cause);
        this.reasons = List.copyOf(reasons);
        this.fencedItemIndex = fencedItemIndex;
    }

    /**
     * DynamoDB's cancellation reasons, one per item of the request in its order ({@code Code} {@code None} for an item
     * that did not stop it); empty if DynamoDB sent none, or after deserialization.
     *
     * @since 0.1
     */
    public List<CancellationReason> cancellationReasons() {
        return reasons == null ? List.of() : reasons;
    }

    /**
     * The index in {@code transactItems} of the fenced item's action.
     *
     * @since 0.1
     */
    public int fencedItemIndex() {
        return fencedItemIndex;
    }
}
