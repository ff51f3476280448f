package dev.fenceguard.core.internal;

import dev.fenceguard.core.Lease;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The leases behind {@code LockContext}: a stack per thread. {@code withLock} pushes around its work;
 * fence-guard's integrations whose lock and unlock are separate calls (the ShedLock provider) push on
 * lock and close on unlock. Why entries are closed rather than popped: an unlock may come out of order,
 * or from another thread; a closed entry is skipped at once and dropped by the next access on its own
 * thread (only the owning thread ever touches its stack, so the stack needs no lock).
 */
public final class ThreadLeases {

    private static final ThreadLocal<ArrayDeque<Entry>> STACK = new ThreadLocal<>();

    private ThreadLeases() {}

    /** One lease on one thread's stack, until closed. Identity matters: no equals. */
    public static final class Entry implements AutoCloseable {
        private final Lease lease;
        private volatile boolean closed;

        private Entry(Lease lease) {
            this.lease = lease;
        }

        /** Takes the lease out of its thread's context; idempotent, from any thread. */
        @Override
        public void close() {
            closed = true;
            live(); // drops it now when called on its own thread; otherwise at that thread's next access
        }
    }

    /** Makes {@code lease} the innermost of the calling thread's context until the entry is closed. */
    public static Entry push(Lease lease) {
        ArrayDeque<Entry> stack = live();
        if (stack == null) {
            stack = new ArrayDeque<>();
            STACK.set(stack);
        }
        Entry entry = new Entry(lease);
        stack.addLast(entry);
        return entry;
    }

    /** The calling thread's leases, innermost first. */
    public static List<Lease> innermostFirst() {
        ArrayDeque<Entry> stack = live();
        if (stack == null) {
            return List.of();
        }
        List<Lease> leases = new ArrayList<>(stack.size());
        for (Iterator<Entry> it = stack.descendingIterator(); it.hasNext(); ) {
            leases.add(it.next().lease);
        }
        return leases;
    }

    /** This thread's stack without closed entries, or null (and nothing left on the thread) when empty. */
    private static ArrayDeque<Entry> live() {
        ArrayDeque<Entry> stack = STACK.get();
        if (stack == null) {
            return null;
        }
        stack.removeIf(e -> e.closed);
        if (stack.isEmpty()) {
            STACK.remove(); // leave nothing behind on a pooled thread
            return null;
        }
        return stack;
    }
}
