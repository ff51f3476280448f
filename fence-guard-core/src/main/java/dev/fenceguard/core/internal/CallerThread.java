package dev.fenceguard.core.internal;

import java.util.function.Supplier;

/**
 * Lets a blocking face lend its own thread to the backend call it is about to wait for (issue #31).
 *
 * <p>A backend whose driver blocks (JDBC) runs each call on an executor, so that the asynchronous face never
 * holds its caller's thread; by default a new virtual thread per call. When the caller is a blocking method
 * that will only wait for that call, the hop buys nothing and costs the most of anything on the lock path:
 * measured on PostgreSQL, a virtual thread per call took a lock pair from 0.78x to 0.53x of the same fenced
 * pair written by hand, and its client CPU from 30 to 55 us (docs/BENCHMARKS.md, "Where the PostgreSQL lock
 * pair's time goes"). So the blocking face marks its thread around the synchronous part of its call
 * ({@link #lend}), and a backend that would hop may take the mark ({@link #take}) and run the call right there.
 *
 * <p>The mark is taken at most once (the first call sent; a release of a late grant, a retry from the timer
 * and everything else go their usual way), and only on a platform thread that is not interrupted: a virtual
 * thread's blocking socket read is ended by an interrupt, which would cut a statement's answer off, while a
 * platform thread's is not. Never on fence-guard's timer thread (a blocking call in a callback that runs
 * there): the call's own deadlines run on that thread. Where nothing takes it (a backend that does not
 * block), it costs a thread-local write and is gone when {@link #lend} returns. The first call sent is not
 * always the face's own: a listener or callback that the face's synchronous part runs (a lease found lost
 * before an extension is sent, say) may send one first and have it lent instead; that call is bounded as
 * any lent call, and the face's own then takes the executor's path.
 */
public final class CallerThread {

    private static final ThreadLocal<Boolean> LENT = new ThreadLocal<>();

    private CallerThread() {}

    /**
     * Runs {@code start} (which sends a backend call and returns its stage) with this thread lent to the
     * first call sent, if this thread can be lent.
     */
    public static <T> T lend(Supplier<T> start) {
        Thread self = Thread.currentThread();
        if (self.isVirtual() || self.isInterrupted() || Timer.isTimerThread(self)) {
            return start.get();
        }
        LENT.set(Boolean.TRUE);
        try {
            return start.get();
        } finally {
            LENT.set(Boolean.FALSE);
        }
    }

    /** Whether this thread is lent to the call being sent; true at most once per {@link #lend}. */
    public static boolean take() {
        // Never lent on a virtual thread: asking would give each one a thread-local map.
        if (Thread.currentThread().isVirtual() || LENT.get() != Boolean.TRUE) {
            return false;
        }
        LENT.set(Boolean.FALSE);
        return true;
    }
}
