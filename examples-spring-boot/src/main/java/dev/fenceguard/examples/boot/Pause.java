package dev.fenceguard.examples.boot;

/**
 * Where a worker can be stopped while it holds the lock, as a stop-the-world GC pause would stop it:
 * the demo's tests use it to replay the zombie story; in the service it does nothing.
 */
public interface Pause {

    /** Does nothing. */
    Pause NONE = (orderId, worker) -> {};

    /** Called after {@code worker} has taken the lock on {@code orderId}, before it charges the card. */
    void afterLocked(String orderId, String worker) throws InterruptedException;
}
