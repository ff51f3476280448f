package dev.fenceguard.testkit;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * A property-test template that proves, for <em>your</em> write path, that stale writes are rejected.
 * Extend it with your fenced write and your read; jqwik generates histories of holders writing with
 * random fences (repeated writes, older fences arriving late, two holders writing at once) and checks
 * every outcome and the state after each step against the write rule of {@link FencePolicy}. When the
 * write path is unfenced or racy, jqwik shrinks the history to a minimal counterexample and the
 * failure message shows it as a timeline.
 *
 * <pre>{@code
 * class OrderWriterProperties extends FencedResourceProperties {
 *     protected void create(String id) { repo.insert(id, "initial"); }
 *     protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
 *         return repo.updateStatus(id, value, fence);           // your fenced write
 *     }
 *     protected Optional<String> read(String id) { return repo.status(id); }
 * }
 * }</pre>
 *
 * <p>Each history uses a fresh resource id. Two writes of one step run on two threads at once; a
 * write path made of several calls (read, then write) should call {@link Pause#pause()} between them,
 * where a real process could stall: the template lines both writers up there to expose races. An
 * atomic write path has no such point and never needs to call it.
 */
public abstract class FencedResourceProperties {

    /** A point in a write path where a process could stall (a GC, a slow network). */
    public interface Pause {
        /** In a step with two concurrent writers, waits until both reach this point, then lets one go first. */
        void pause();
    }

    /** One write of a history: writer {@code W<writer>} writes value {@code v} with {@code fence}. */
    public record Write(int writer, long fence) {
        String value(int step) {
            return "W" + writer + "@" + fence + "#" + step;
        }
    }

    /** Creates the resource {@code id} before its history, holding {@link #initialValue()} and no fence. */
    protected abstract void create(String id) throws Exception;

    /** Writes {@code value} to resource {@code id} with {@code fence}, through the path under test. */
    protected abstract WriteOutcome write(String id, FenceToken fence, String value, Pause pause) throws Exception;

    /** The resource's current value. */
    protected abstract Optional<String> read(String id) throws Exception;

    /** The write rule your path implements; default {@link FencePolicy#SAME_OR_NEWER}. */
    protected FencePolicy policy() {
        return FencePolicy.SAME_OR_NEWER;
    }

    /** The value {@link #create(String)} stores. */
    protected String initialValue() {
        return "initial";
    }

    @Property(tries = 60)
    void staleWritesAreRejectedAndTheRuleHolds(@ForAll("histories") List<List<Write>> history) throws Exception {
        String id = "fr-" + UUID.randomUUID().toString().substring(0, 12);
        create(id);
        long stored = 0;
        String value = initialValue();
        List<String> timeline = new ArrayList<>();
        for (int step = 0; step < history.size(); step++) {
            List<Write> writes = history.get(step);
            if (writes.size() == 1) {
                Write w = writes.getFirst();
                WriteOutcome got = write(id, FenceToken.of(w.fence()), w.value(step), () -> {});
                boolean admitted = policy().admits(w.fence(), stored);
                timeline.add("step " + step + ": W" + w.writer() + " writes fence " + w.fence() + " -> " + describe(got)
                        + " (stored fence was " + stored + ")");
                check(matches(got, admitted, stored), "outcome contradicts the " + policy() + " rule", timeline);
                if (admitted) {
                    stored = w.fence();
                    value = w.value(step);
                }
            } else {
                WriteOutcome[] got = concurrently(id, writes, step);
                Write a = writes.get(0);
                Write b = writes.get(1);
                timeline.add("step " + step + ": W" + a.writer() + " (fence " + a.fence() + ") and W" + b.writer() + " (fence "
                        + b.fence() + ") write at once -> " + describe(got[0]) + " / " + describe(got[1]) + " (stored fence was " + stored + ")");
                Optional<String> actual = read(id);
                long[] next = serialise(a, got[0], b, got[1], stored, step, value, actual);
                check(next != null, "no serial order of the two writes explains these outcomes and the value "
                        + actual.orElse("<none>"), timeline);
                stored = next[0];
                value = next[1] == 0 ? value : next[1] == 1 ? a.value(step) : b.value(step);
            }
            Optional<String> now = read(id);
            timeline.add("        value now " + now.orElse("<none>"));
            check(now.isPresent() && now.get().equals(value), "the resource holds " + now.orElse("<none>")
                    + " but the rule says " + value, timeline);
        }
    }

    /**
     * Returns {stored fence, which write's value stands (0 none, 1 a, 2 b)} for the first serial order
     * (a then b, or b then a) that explains both outcomes and the final value; null if none does.
     */
    private long[] serialise(Write a, WriteOutcome oa, Write b, WriteOutcome ob, long stored, int step, String value,
            Optional<String> actual) {
        for (boolean aFirst : new boolean[] {true, false}) {
            Write first = aFirst ? a : b;
            Write second = aFirst ? b : a;
            WriteOutcome firstOutcome = aFirst ? oa : ob;
            WriteOutcome secondOutcome = aFirst ? ob : oa;
            boolean firstAdmitted = policy().admits(first.fence(), stored);
            long afterFirst = firstAdmitted ? first.fence() : stored;
            boolean secondAdmitted = policy().admits(second.fence(), afterFirst);
            long afterSecond = secondAdmitted ? second.fence() : afterFirst;
            String expected = secondAdmitted ? second.value(step) : firstAdmitted ? first.value(step) : value;
            if (matches(firstOutcome, firstAdmitted, stored) && matches(secondOutcome, secondAdmitted, afterFirst)
                    && actual.isPresent() && actual.get().equals(expected)) {
                long winner = secondAdmitted ? (aFirst ? 2 : 1) : firstAdmitted ? (aFirst ? 1 : 2) : 0;
                return new long[] {afterSecond, winner};
            }
        }
        return null;
    }

    private WriteOutcome[] concurrently(String id, List<Write> writes, int step) throws Exception {
        CyclicBarrier lineUp = new CyclicBarrier(2);
        // Two threads of our own: the common pool may have a single worker on small machines, which
        // would run the "concurrent" writes one after the other and hide every race.
        java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            CompletableFuture<WriteOutcome> first = CompletableFuture.supplyAsync(() -> call(id, writes.get(0), step, lineUp, 0), two);
            CompletableFuture<WriteOutcome> second = CompletableFuture.supplyAsync(() -> call(id, writes.get(1), step, lineUp, 10), two);
            return new WriteOutcome[] {first.get(30, TimeUnit.SECONDS), second.get(30, TimeUnit.SECONDS)};
        } finally {
            two.shutdownNow();
        }
    }

    private WriteOutcome call(String id, Write w, int step, CyclicBarrier lineUp, long lateMillis) {
        try {
            return write(id, FenceToken.of(w.fence()), w.value(step), () -> {
                try {
                    lineUp.await(200, TimeUnit.MILLISECONDS); // the other writer may never pause: don't wait long
                } catch (TimeoutException | java.util.concurrent.BrokenBarrierException e) {
                    // run on
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (lateMillis > 0) {
                    try {
                        Thread.sleep(lateMillis);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
        } catch (Exception e) {
            throw new IllegalStateException("the write path threw: " + e, e);
        }
    }

    private static boolean matches(WriteOutcome got, boolean admitted, long stored) {
        return switch (got) {
            case WriteOutcome.Applied a -> admitted;
            case WriteOutcome.Stale s -> !admitted && s.currentFence() == stored;
            case WriteOutcome.NotFound n -> false;
        };
    }

    private static String describe(WriteOutcome o) {
        return switch (o) {
            case WriteOutcome.Applied a -> "Applied";
            case WriteOutcome.Stale s -> "Stale(current " + s.currentFence() + ")";
            case WriteOutcome.NotFound n -> "NotFound";
        };
    }

    private static void check(boolean ok, String what, List<String> timeline) {
        if (!ok) {
            throw new AssertionError(what + "\ntimeline:\n  " + String.join("\n  ", timeline));
        }
    }

    @Provide
    Arbitrary<List<List<Write>>> histories() {
        Arbitrary<Write> write = net.jqwik.api.Combinators.combine(Arbitraries.integers().between(1, 3),
                Arbitraries.longs().between(1, 6)).as(Write::new);
        Arbitrary<List<Write>> step = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, write.map(List::of)),
                net.jqwik.api.Tuple.of(1, write.list().ofSize(2)));
        return step.list().ofMinSize(1).ofMaxSize(8);
    }
}
