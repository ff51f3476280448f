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

    /**
     * @param resource a description of the guarded resource, e.g. {@code public.orders[id=42]}
     * @param presentedFence the fence the rejected write carried
     * @param currentFence the fence the resource holds
     * @param policy the rule that rejected the write
     */
    public StaleFenceException(String resource, long presentedFence, long currentFence, FencePolicy policy) {
        super(ErrorCode.STALE_FENCE, resource, "stale write rejected: presented fence " + presentedFence
                + " but the resource holds fence " + currentFence + " (" + policy + ")");
        this.resource = resource;
        this.presentedFence = presentedFence;
        this.currentFence = currentFence;
        this.policy = policy;
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
}
