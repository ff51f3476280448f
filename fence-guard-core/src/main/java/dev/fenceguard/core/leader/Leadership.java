package dev.fenceguard.core.leader;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import java.time.Instant;

/**
 * One term of leadership held by this process. Pass {@link #term()} with every write the leader makes
 * to a fenced resource: once a newer leader has written, this term's writes are refused as stale,
 * whether or not this process has noticed its loss yet.
 *
 * <p>{@link #isValid()} is this process's belief, on its monotonic clock, that the term still stands;
 * it turns false at the latest one TTL after the last renewal the backend confirmed, and at once on
 * resignation. It is a hint for skipping work early, never a guarantee: the fence is the guarantee.
 *
 * @since 0.1
 */
public final class Leadership {

    private final String name;
    private final Lease lease;
    private volatile boolean ended;

    Leadership(String name, Lease lease) {
        this.name = name;
        this.lease = lease;
    }

    /** The name of the leadership campaigned for. */
    public String name() {
        return name;
    }

    /** The term: the fence of the lock behind it; strictly greater than every earlier term of {@link #name()}. */
    public FenceToken term() {
        return lease.fence();
    }

    /** When the backend will consider the term over unless renewed, by the backend's clock, as of the last renewal. */
    public Instant expiresAt() {
        return lease.expiresAt();
    }

    /** Whether this process may still believe it leads; see the class comment. */
    public boolean isValid() {
        return !ended && lease.isValid();
    }

    Lease lease() {
        return lease;
    }

    /** Marks the term over for this process; true only for the first caller. */
    synchronized boolean end() {
        if (ended) {
            return false;
        }
        ended = true;
        return true;
    }

    @Override
    public String toString() {
        return "Leadership[" + name + ", term=" + term().value() + ", valid=" + isValid() + "]";
    }
}
