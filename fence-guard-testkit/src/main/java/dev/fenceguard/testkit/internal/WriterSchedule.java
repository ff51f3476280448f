package dev.fenceguard.testkit.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs writers on threads of their own and decides, at every pause point, who goes on. A writer runs
 * until it pauses or finishes; once <em>every</em> writer has paused or finished, the schedule lets
 * exactly one paused writer go on and waits again. So the interleaving at pause points depends only on
 * {@code releaseOrder}, never on how the threads happen to be scheduled.
 *
 * <p>The guard bounds how long one wait may take. It is a failure, not a way to make progress: a writer
 * that neither pauses nor finishes in time (it hangs, or blocks on a lock a paused writer holds) makes
 * {@link #run} throw {@link StuckWriterException}.
 */
public final class WriterSchedule {

    /** One writer: its work, given the pause it must call at every point where it could stall. */
    @FunctionalInterface
    public interface Writer<T> {
        T run(Runnable pause) throws Exception;
    }

    /** A writer neither paused nor finished within the guard. */
    public static final class StuckWriterException extends Exception {
        StuckWriterException(String message) {
            super(message);
        }
    }

    private enum State { RUNNING, PAUSED, DONE }

    private final State[] states;
    private boolean abandoned;

    private WriterSchedule(int writers) {
        this.states = new State[writers];
        java.util.Arrays.fill(states, State.RUNNING);
    }

    /**
     * Runs the writers, releasing paused writers in {@code releaseOrder}: at the k-th release, entry k
     * ({@code false} when the list is shorter) picks among the paused writers, in writer order, the
     * first ({@code false}) or the last ({@code true}).
     *
     * @return each writer's result, in writer order
     * @throws StuckWriterException if a writer neither paused nor finished within {@code guard}
     * @throws Exception what a writer threw (the first, in writer order)
     */
    public static <T> List<T> run(List<Writer<T>> writers, List<Boolean> releaseOrder, Duration guard) throws Exception {
        WriterSchedule schedule = new WriterSchedule(writers.size());
        ExecutorService threads = Executors.newFixedThreadPool(writers.size());
        try {
            List<Future<T>> results = new ArrayList<>();
            for (int i = 0; i < writers.size(); i++) {
                int me = i;
                results.add(threads.submit(() -> {
                    try {
                        return writers.get(me).run(() -> schedule.pause(me));
                    } finally {
                        schedule.finished(me);
                    }
                }));
            }
            schedule.drive(releaseOrder, guard);
            List<T> out = new ArrayList<>();
            for (Future<T> f : results) {
                try {
                    out.add(f.get()); // every writer is DONE: this does not wait
                } catch (ExecutionException e) {
                    throw e.getCause() instanceof Exception ex ? ex : e;
                }
            }
            return out;
        } finally {
            schedule.abandon();
            threads.shutdownNow();
        }
    }

    private synchronized void pause(int writer) {
        states[writer] = State.PAUSED;
        notifyAll();
        while (states[writer] == State.PAUSED && !abandoned) {
            try {
                wait();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private synchronized void finished(int writer) {
        states[writer] = State.DONE;
        notifyAll();
    }

    private synchronized void abandon() {
        abandoned = true;
        notifyAll();
    }

    private synchronized void drive(List<Boolean> releaseOrder, Duration guard) throws StuckWriterException, InterruptedException {
        int release = 0;
        while (true) {
            long deadline = System.nanoTime() + guard.toNanos();
            int running;
            while ((running = indexOf(State.RUNNING)) >= 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new StuckWriterException("writer " + (running + 1) + " neither paused nor finished within " + guard
                            + (indexOf(State.PAUSED) >= 0 ? " while writer " + (indexOf(State.PAUSED) + 1)
                                    + " was paused (does the path hold a lock across pause()?)" : ""));
                }
                wait(Math.max(1, left / 1_000_000));
            }
            List<Integer> paused = new ArrayList<>();
            for (int i = 0; i < states.length; i++) {
                if (states[i] == State.PAUSED) {
                    paused.add(i);
                }
            }
            if (paused.isEmpty()) {
                return; // all done
            }
            boolean last = release < releaseOrder.size() && releaseOrder.get(release);
            release++;
            states[last ? paused.getLast() : paused.getFirst()] = State.RUNNING;
            notifyAll();
        }
    }

    private int indexOf(State state) {
        for (int i = 0; i < states.length; i++) {
            if (states[i] == state) {
                return i;
            }
        }
        return -1;
    }
}
