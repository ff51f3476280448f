package dev.fenceguard.core;

/**
 * A fenced write was rejected because the resource already holds a newer fence: the writer's lease
 * has been superseded (it is a "zombie"). Nothing was written.
 *
 * <p>Obtained from {@link WriteOutcome#orThrow()}; code {@link ErrorCode#STALE_FENCE}.
 *
 * @since 0.1
 */
public final class StaleFenceException extends FenceGuardException {

    private static final long serialVersionUID = 1L;

    private final String resource;
    private final long presentedFence;
    private final long currentFence;
    private final FencePolicy policy;
    private final WriteOutcome.Stale.Reason reason;

    /**
     * A write refused by the fence the resource holds ({@link WriteOutcome.Stale.Reason#NEWER_FENCE}).
     *
     * @param resource a description of the guarded resource, e.g. {@code public.orders[id=42]}
     * @param presentedFence the fence the rejected write carried
     * @param currentFence the fence the resource holds
     * @param policy the rule that rejected the write
     */
    public StaleFenceException(String resource, long presentedFence, long currentFence, FencePolicy policy) {
        this(resource, presentedFence, currentFence, policy, WriteOutcome.Stale.Reason.NEWER_FENCE);
    }

    /**
     * A write refused for {@code reason}.
     *
     * @param resource a description of the guarded resource, e.g. {@code public.orders[id=42]}
     * @param presentedFence the fence the rejected write carried
     * @param currentFence the fence the resource holds, or the horizon for
     *     {@link WriteOutcome.Stale.Reason#BELOW_HORIZON}
     * @param policy the rule that rejected the write
     * @param reason why it was refused
     * @throws NullPointerException if {@code reason} is null
     * @since 0.1
     */
    public StaleFenceException(String resource, long presentedFence, long currentFence, FencePolicy policy,
            WriteOutcome.Stale.Reason reason) {
        super(ErrorCode.STALE_FENCE, resource, message(presentedFence, currentFence, policy, reason));
        this.resource = resource;
        this.presentedFence = presentedFence;
        this.currentFence = currentFence;
        this.policy = policy;
        this.reason = reason;
    }

    private static String message(long presentedFence, long currentFence, FencePolicy policy, WriteOutcome.Stale.Reason reason) {
        if (java.util.Objects.requireNonNull(reason, "reason") == WriteOutcome.Stale.Reason.BELOW_HORIZON) {
            return "stale write rejected: presented fence " + presentedFence + " is at or below the horizon " + currentFence
                    + " and the resource has no fence record, so the write would create one (BELOW_HORIZON: a lease older"
                    + " than the horizon cannot create a key)";
        }
        return "stale write rejected: presented fence " + presentedFence + " but the resource holds fence " + currentFence
                + " (" + policy + ")";
    }

    /** The guarded resource. */
    public String resource() {
        return resource;
    }

    /** The fence the rejected write carried. */
    public long presentedFence() {
        return presentedFence;
    }

    /** The fence the resource holds. */
    public long currentFence() {
        return currentFence;
    }

    /** The rule that rejected the write. */
    public FencePolicy policy() {
        return policy;
    }

    /**
     * Why the write was refused.
     *
     * @since 0.1
     */
    public WriteOutcome.Stale.Reason reason() {
        return reason;
    }
}
