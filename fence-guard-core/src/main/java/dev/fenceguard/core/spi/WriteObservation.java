package dev.fenceguard.core.spi;

import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.Redacted;
import java.util.Objects;
import java.util.concurrent.CompletionException;

/**
 * One observed fenced write, from {@link WriteRule#startWrite}: a writer ends it exactly once, with
 * {@link #finish} or {@link #fail}; later calls are ignored. Thread-safe.
 *
 * @since 0.1
 */
public final class WriteObservation {

    private final LockObservations.Observed observed;
    private boolean ended;

    WriteObservation(LockObservations.Observed observed) {
        this.observed = observed;
    }

    /**
     * Makes this write the current observation of the calling thread until the scope is closed, on
     * the same thread: observations the driver makes meanwhile become its children.
     */
    public LockObservations.Scope openScope() {
        return observed.openScope();
    }

    /**
     * Ends the observation with the write's outcome: {@code applied}, {@code stale} or {@code not_found}.
     *
     * @throws NullPointerException if {@code outcome} is null
     */
    public synchronized void finish(WriteOutcome outcome) {
        Objects.requireNonNull(outcome, "outcome");
        if (ended) {
            return;
        }
        ended = true;
        // Not a pattern switch: its first run in a process generates a class (about 10 ms, more on a busy
        // machine), which landed in the first fenced write after a warm-up. A type test costs nothing extra.
        observed.outcome(outcome instanceof WriteOutcome.Applied ? "applied"
                : outcome instanceof WriteOutcome.Stale ? "stale" : "not_found");
        observed.stop();
    }

    /**
     * Ends the observation with outcome {@code error}. The error is recorded redacted (class names and
     * fence-guard's own messages only), since a driver's message may quote stored data.
     *
     * @throws NullPointerException if {@code error} is null
     */
    public synchronized void fail(Throwable error) {
        Objects.requireNonNull(error, "error");
        if (ended) {
            return;
        }
        ended = true;
        Throwable e = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        observed.error(Redacted.chain(e, 0));
        observed.outcome("error");
        observed.stop();
    }
}
