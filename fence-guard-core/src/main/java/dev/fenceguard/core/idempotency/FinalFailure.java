package dev.fenceguard.core.idempotency;

import java.util.Objects;

/**
 * Thrown by a work to say that its operation failed for good (a card declined, an order cancelled):
 * the store records the {@linkplain #reason() reason}, and every retry with the same fingerprint gets
 * {@link IdempotencyResult.FailedFinally} with it instead of running the work again. Any other
 * exception marks the attempt retryable: the next claim runs the work again.
 *
 * @since 0.1
 */
public class FinalFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String reason;

    /**
     * @param reason what to tell every retry; stored as UTF-8, so keep it short and free of secrets
     */
    public FinalFailure(String reason) {
        super("final failure: " + Objects.requireNonNull(reason, "reason"));
        this.reason = reason;
    }

    /** What every retry is told. */
    public String reason() {
        return reason;
    }
}
