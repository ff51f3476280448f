package dev.fenceguard.core.spi;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.EventPublisher;
import dev.fenceguard.core.internal.Text;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The write rule in one place, for every fenced-write helper (PostgreSQL, Redis, Firestore, and any a
 * user writes): how a fence is stored and read back, whether a presented fence is admitted, and the
 * outcome of a rejection, counted once in the metrics. The atomic check-and-write itself happens on the
 * server (a statement, a script, a transaction); this class only decides and describes.
 *
 * <p>Stored fences: {@code null}, a missing value and any all-zero text count as 0 ("never fenced");
 * numbers are taken as they are; text must be the 15-digit form of {@link FenceToken#toString()}
 * (surrounding blanks, as a {@code CHAR(15)} column may pad, are ignored). Immutable and thread-safe.
 *
 * <p>Observing writes: a helper runs each fenced write through {@link #observe} (or
 * {@link #observeAsync}, or {@link #startWrite} for results of other shapes), which reports one
 * {@value LockObservations#WRITE} observation per write to {@link #observations()}. Started on the
 * thread that runs a blocking {@code withLock}'s work, it is a child of that {@code withLock}'s
 * observation.
 *
 * @param policy the rule
 * @param encoding how the resource stores fences
 * @param metrics where rejections are counted
 * @param resourceType a bounded metric tag: {@code postgres}, {@code redis}, {@code firestore}, ...; the
 *     {@code backend} key value of write observations
 * @param observations where writes are observed (since 0.2)
 * @since 0.1
 */
public record WriteRule(FencePolicy policy, FenceEncoding encoding, LockMetrics metrics, String resourceType,
        LockObservations observations) {

    public WriteRule {
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(encoding, "encoding");
        Objects.requireNonNull(metrics, "metrics");
        Objects.requireNonNull(resourceType, "resourceType");
        Objects.requireNonNull(observations, "observations");
    }

    /** A rule whose writes are not observed ({@link LockObservations#none()}). */
    public WriteRule(FencePolicy policy, FenceEncoding encoding, LockMetrics metrics, String resourceType) {
        this(policy, encoding, metrics, resourceType, LockObservations.none());
    }

    /**
     * Starts observing one fenced write; end it with {@link WriteObservation#finish} or
     * {@link WriteObservation#fail}. For writes whose result is not a single {@link WriteOutcome}; the
     * others use {@link #observe} or {@link #observeAsync}.
     *
     * @param kind a bounded kind of resource, the {@code resource.type} key value: a table or collection
     *     name, a Redis data type; never a row key or document id
     * @param operation the {@code operation} key value: {@code update}, {@code upsert}, {@code delete}, ...
     * @param fence the fence the write carries
     * @throws NullPointerException if an argument is null
     * @since 0.1
     */
    public WriteObservation startWrite(String kind, String operation, FenceToken fence) {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(fence, "fence");
        LockObservations.Observed observed = observations.startWrite(resourceType, kind, operation);
        observed.fence(fence);
        return new WriteObservation(observed);
    }

    /**
     * Runs one blocking fenced write under a {@value LockObservations#WRITE} observation, current on
     * this thread while {@code write} runs (so a driver's own observations nest under it), and ends it
     * with the outcome: {@code applied}, {@code stale}, {@code not_found}, or {@code error} if
     * {@code write} throws (what it throws is passed on unchanged) or returns null (then a
     * {@link NullPointerException} is thrown).
     *
     * @see #startWrite
     * @since 0.1
     */
    public WriteOutcome observe(String kind, String operation, FenceToken fence, Supplier<WriteOutcome> write) {
        Objects.requireNonNull(write, "write");
        WriteObservation observation = startWrite(kind, operation, fence);
        WriteOutcome outcome;
        try (LockObservations.Scope scope = observation.openScope()) {
            outcome = Objects.requireNonNull(write.get(), "the write returned no outcome");
        } catch (RuntimeException | Error e) {
            observation.fail(e);
            throw e;
        }
        observation.finish(outcome);
        return outcome;
    }

    /**
     * {@link #observe} for a write that answers with a stage: the observation is current while
     * {@code write} starts the write, and ends when the stage completes. Cancelling the stage returned
     * cancels {@code write}'s stage (when it is a {@link CompletableFuture}), as if it had been handed
     * out unobserved, and ends the observation with {@code error}. With {@link LockObservations#none()}
     * {@code write}'s stage itself is returned.
     *
     * @return {@code write}'s stage, observed
     * @since 0.1
     */
    public CompletionStage<WriteOutcome> observeAsync(String kind, String operation, FenceToken fence,
            Supplier<? extends CompletionStage<WriteOutcome>> write) {
        Objects.requireNonNull(write, "write");
        if (observations == LockObservations.none()) {
            return Objects.requireNonNull(write.get(), "the write returned no stage");
        }
        WriteObservation observation = startWrite(kind, operation, fence);
        CompletionStage<WriteOutcome> stage;
        try (LockObservations.Scope scope = observation.openScope()) {
            stage = Objects.requireNonNull(write.get(), "the write returned no stage");
        } catch (RuntimeException | Error e) {
            observation.fail(e);
            throw e;
        }
        CompletionStage<WriteOutcome> observed = stage.whenComplete((outcome, error) -> {
            if (error != null) {
                observation.fail(error);
            } else if (outcome == null) {
                observation.fail(new NullPointerException("the write completed with no outcome"));
            } else {
                observation.finish(outcome);
            }
        });
        // The caller holds the derived stage: its cancel must still reach the write (an RPC to end, a timer to drop),
        // and must end the observation, since a cancelled derived stage never runs the callback above.
        if (observed instanceof CompletableFuture<WriteOutcome> result) {
            result.whenComplete((outcome, error) -> {
                if (result.isCancelled()) {
                    observation.fail(error);
                    if (stage instanceof CompletableFuture<WriteOutcome> source) {
                        source.cancel(false);
                    }
                }
            });
        }
        return observed;
    }

    /** The value to store for {@code fence}: a {@code Long}, or the 15-digit text. */
    public Object encode(FenceToken fence) {
        return encoding == FenceEncoding.INTEGER ? (Object) fence.value() : fence.toString();
    }

    /** The stored value that means "never fenced" in this encoding. */
    public Object zero() {
        return encoding == FenceEncoding.INTEGER ? (Object) 0L : "000000000000000";
    }

    /**
     * The fence a resource holds, from its stored value (see the class comment).
     *
     * @throws IllegalStateException if the stored value is neither a number nor a fence's text form
     */
    public static long decode(Object stored) {
        if (stored == null) {
            return 0;
        }
        if (stored instanceof Number n) {
            return n.longValue();
        }
        String text = stored.toString().strip();
        if (!text.isEmpty() && text.chars().allMatch(c -> c == '0')) {
            return 0;
        }
        try {
            return FenceToken.parse(text).value();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("the stored fence is not a fence: '" + (text.length() > 20 ? text.substring(0, 20) + "..." : text)
                    + "' (expected a number or 15 digits)", e);
        }
    }

    /** Whether {@code presented} may replace {@code stored} under the policy. */
    public boolean admits(FenceToken presented, long stored) {
        return policy.admits(presented, stored);
    }

    /**
     * A rejection of {@code presented} by a resource holding {@code stored}; counted once in the metrics (a
     * metrics sink that throws is logged and never fails the write).
     */
    public WriteOutcome.Stale stale(String resource, FenceToken presented, long stored) {
        EventPublisher.deliver("LockMetrics", "fenced writes", "StaleWrite",
                () -> metrics.staleWriteRejected(resourceType));
        return new WriteOutcome.Stale(resource, presented.value(), stored, policy);
    }

    /**
     * A refusal of {@code presented} because it would create the fence record of a key that has none at or
     * below {@code horizon} ({@link WriteOutcome.Stale.Reason#BELOW_HORIZON}); counted once in the metrics,
     * like {@link #stale}.
     *
     * @since 0.1
     */
    public WriteOutcome.Stale belowHorizon(String resource, FenceToken presented, long horizon) {
        EventPublisher.deliver("LockMetrics", "fenced writes", "StaleWrite",
                () -> metrics.staleWriteRejected(resourceType));
        return new WriteOutcome.Stale(resource, presented.value(), horizon, policy, WriteOutcome.Stale.Reason.BELOW_HORIZON);
    }

    /**
     * Counts {@code removed} fence records of {@code kind} ({@code tombstone}, {@code lock}) that a purge
     * removed from this rule's store ({@link LockMetrics#purged}); nothing when {@code removed} is 0. A
     * metrics sink that throws is logged and never fails the purge.
     *
     * @since 0.1
     */
    public void purged(String kind, long removed) {
        Objects.requireNonNull(kind, "kind");
        if (removed > 0) {
            EventPublisher.deliver("LockMetrics", "purges", "Purged", () -> metrics.purged(resourceType, kind, removed));
        }
    }

    /**
     * Checks a resource key or id given as text: not null, not empty, valid Unicode (no unpaired
     * surrogate, which no store can round-trip).
     *
     * @return the key
     * @throws IllegalArgumentException saying what is wrong (before any I/O)
     */
    public static String checkKey(String what, String key) {
        Objects.requireNonNull(key, what);
        if (key.isEmpty()) {
            throw new IllegalArgumentException(what + " must not be empty");
        }
        Text.requireValidUnicode(what, key);
        return key;
    }

    /**
     * {@link #checkKey} for stores that cannot hold NUL in text (PostgreSQL).
     *
     * @throws IllegalArgumentException if the key is invalid or contains U+0000
     */
    public static String checkTextKey(String what, String key) {
        checkKey(what, key);
        if (key.indexOf('\0') >= 0) {
            throw new IllegalArgumentException(what + " must not contain NUL (U+0000), which PostgreSQL cannot store in text");
        }
        return key;
    }
}
