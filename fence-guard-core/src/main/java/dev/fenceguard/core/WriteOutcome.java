package dev.fenceguard.core;

import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * What happened to one fenced write: {@link Applied}, {@link Stale} or {@link NotFound}.
 *
 * <p>Helpers return an outcome rather than a bare row count so that a rejection is never mistaken for
 * a missing row. Switch over it, or call {@link #orThrow()}:
 *
 * <pre>{@code
 * switch (orders.on(dataSource).update(42L, lease.fence(), Assignments.of("status", "paid"))) {
 *     case WriteOutcome.Applied a -> log.info("saved");
 *     case WriteOutcome.Stale s -> log.warn("zombie write refused: {}", s);
 *     case WriteOutcome.NotFound n -> throw new OrderMissing();
 * }
 * }</pre>
 *
 * @since 0.1
 */
public sealed interface WriteOutcome {

    /** The guarded resource, e.g. {@code public.orders[id=42]}. */
    String resource();

    /** Whether the write took effect. */
    default boolean isApplied() {
        return this instanceof Applied;
    }

    /**
     * Returns this outcome if the write was applied.
     *
     * @throws StaleFenceException if the write was rejected as stale (names both fences)
     * @throws NoSuchElementException if the resource does not exist
     */
    default WriteOutcome orThrow() {
        // Type tests, not a pattern switch: a pattern switch's first run in a process generates a class with
        // the JDK's class-file API (several ms), which would land in a user's first write after a warm-up.
        if (this instanceof Stale s) {
            throw new StaleFenceException(s.resource(), s.presentedFence(), s.currentFence(), s.policy(), s.reason());
        }
        if (this instanceof NotFound n) {
            throw new NoSuchElementException("fenced write found no resource " + n.resource());
        }
        return this;
    }

    /**
     * The write took effect, and the resource now holds the presented fence.
     *
     * @param resource the guarded resource
     * @param fence the fence now stored
     */
    record Applied(String resource, long fence) implements WriteOutcome {
        public Applied {
            Objects.requireNonNull(resource, "resource");
        }
    }

    /**
     * The write was rejected because the resource holds a fence the policy does not let the presented
     * one replace ({@link Reason#NEWER_FENCE}), or, on a writer with a horizon, because it would have
     * created a fence record for a key that has none with a fence at or below the horizon
     * ({@link Reason#BELOW_HORIZON}; {@code currentFence} is then the horizon). Nothing changed.
     *
     * @param resource the guarded resource
     * @param presentedFence the fence the write carried
     * @param currentFence the fence the resource holds, or the horizon when {@code reason} is {@link Reason#BELOW_HORIZON}
     * @param policy the rule that rejected the write
     * @param reason why the write was refused
     */
    record Stale(String resource, long presentedFence, long currentFence, FencePolicy policy, Reason reason) implements WriteOutcome {
        public Stale {
            Objects.requireNonNull(resource, "resource");
            Objects.requireNonNull(policy, "policy");
            Objects.requireNonNull(reason, "reason");
        }

        /**
         * A write refused by the fence the resource holds ({@link Reason#NEWER_FENCE}).
         *
         * @param resource the guarded resource
         * @param presentedFence the fence the write carried
         * @param currentFence the fence the resource holds
         * @param policy the rule that rejected the write
         */
        public Stale(String resource, long presentedFence, long currentFence, FencePolicy policy) {
            this(resource, presentedFence, currentFence, policy, Reason.NEWER_FENCE);
        }

        /**
         * Why a write was refused.
         *
         * @since 0.1
         */
        public enum Reason {
            /** The resource holds a fence the policy does not let the presented one replace. */
            NEWER_FENCE,
            /**
             * The key has no fence record, and the presented fence is at or below the horizon of a writer
             * built with one ({@code docs/fence-lifecycle.md}): a lease older than the horizon cannot create
             * a key, because records below it may have been purged.
             */
            BELOW_HORIZON
        }
    }

    /**
     * There is no such resource (and, for deletes, no tombstone). Nothing changed.
     *
     * @param resource the resource that was looked for
     */
    record NotFound(String resource) implements WriteOutcome {
        public NotFound {
            Objects.requireNonNull(resource, "resource");
        }
    }
}
