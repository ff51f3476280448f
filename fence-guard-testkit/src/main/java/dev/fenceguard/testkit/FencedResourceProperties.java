package dev.fenceguard.testkit;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.internal.WriterSchedule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * A property-test template that proves, for <em>your</em> write path, that stale writes are rejected.
 * Extend it with your fenced write and your read; jqwik generates histories of holders writing (and,
 * if you opt in, upserting and deleting) with random fences: repeated writes, older fences arriving
 * late, a delete followed by a stale create, two holders writing at once. Every outcome and the state
 * after each step are checked against the write rule of {@link FencePolicy}. When the write path is
 * unfenced or racy, jqwik shrinks the history to a minimal counterexample and the failure message
 * shows it as a timeline.
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
 * <h2>Two writers at once, scheduled by the template</h2>
 * In a concurrent step two writes run on two threads. A write path made of several calls (read, then
 * write) calls {@link Pause#pause()} wherever a real process could stall between them. The template,
 * not the clock, decides who goes on: it waits until every writer has either paused or finished, then
 * releases one paused writer (the order is generated and shrinks like any other value), waits again,
 * and so on until both have finished. So a check-then-write path is caught whenever the generator
 * releases the higher fence first, and {@link #knownRaces()} does exactly that on every run, in both
 * orders, so no run can miss it. An atomic write path has no such point and never calls {@code pause()}.
 *
 * <p>Do not call {@code pause()} while your path holds a lock that the other writer needs (a row lock
 * of an open transaction, say): the other writer then can neither pause nor finish, and after
 * {@link #writerGuard()} the property fails with "writer never finished". A section under such a lock
 * is already serialised and has no race for the template to expose.
 *
 * <h2>Deletes and creates</h2>
 * Override {@link #operations()} to add {@link Operation#UPSERT} and/or {@link Operation#DELETE}, and the
 * matching {@link #upsert} / {@link #delete} methods. The histories then include deletes (of live,
 * deleted and never-created resources) followed by stale creates, which a fenced delete must refuse:
 * once a resource has seen a fence, no lower fence may change it, whether it is there or not. If your
 * {@link #write} creates an absent resource (Redis {@code SET}, Firestore {@code set}), say so with
 * {@link #writeCreates()}.
 *
 * <p>Each history uses a fresh resource id. Subclasses are instantiated by jqwik once per property; the
 * resources they create should live in a schema, key prefix or project of their own.
 *
 * @since 0.1
 */
public abstract class FencedResourceProperties {

    /** A point in a write path where a process could stall (a GC, a slow network). */
    public interface Pause {
        /**
         * In a step with two concurrent writers, blocks until the template lets this writer go on. It lets
         * writers go one at a time, in the order it generated, once every writer has paused or finished.
         */
        void pause();
    }

    /** What a history step does. */
    public enum Operation {
        /** {@link #write}: your fenced write (an update unless {@link #writeCreates()}). */
        WRITE,
        /** {@link #upsert}: a fenced create-or-replace. */
        UPSERT,
        /** {@link #delete}: a fenced delete that keeps the fence. */
        DELETE
    }

    /** One action of a history: writer {@code W<writer>} does {@code operation} with {@code fence}. */
    public record Write(int writer, long fence, Operation operation) {
        public Write {
            Objects.requireNonNull(operation, "operation");
            if (fence < 1) {
                throw new IllegalArgumentException("fence must be at least 1, was " + fence);
            }
        }

        /** A plain {@link Operation#WRITE}. */
        public Write(int writer, long fence) {
            this(writer, fence, Operation.WRITE);
        }

        String value(int step) {
            return "W" + writer + "@" + fence + "#" + step;
        }

        @Override
        public String toString() {
            return "W" + writer + " " + operation.name().toLowerCase(java.util.Locale.ROOT) + " fence " + fence;
        }
    }

    /**
     * One step: one write, or two at once. For two, {@code releaseOrder} says which paused writer goes on
     * at each release ({@code false}: the lower-numbered of the paused ones, {@code true}: the other).
     */
    public record Step(List<Write> writes, List<Boolean> releaseOrder) {
        public Step {
            writes = List.copyOf(writes);
            releaseOrder = List.copyOf(releaseOrder);
            if (writes.isEmpty() || writes.size() > 2) {
                throw new IllegalArgumentException("a step has 1 or 2 writes, had " + writes.size());
            }
        }

        static Step of(Write w) {
            return new Step(List.of(w), List.of());
        }

        static Step together(Write first, Write second, boolean secondReleasedFirst) {
            return new Step(List.of(first, second), List.of(secondReleasedFirst));
        }

        @Override
        public String toString() {
            return writes.size() == 1 ? writes.getFirst().toString()
                    : writes.get(0) + " | " + writes.get(1) + " release " + releaseOrder;
        }
    }

    /** A history: whether the resource is created first, then its steps. */
    public record History(boolean created, List<Step> steps) {
        public History {
            steps = List.copyOf(steps);
        }

        @Override
        public String toString() {
            return (created ? "created, " : "never created, ") + steps;
        }
    }

    /** Creates the resource {@code id} before its history, holding {@link #initialValue()} and no fence. */
    protected abstract void create(String id) throws Exception;

    /** Writes {@code value} to resource {@code id} with {@code fence}, through the path under test. */
    protected abstract WriteOutcome write(String id, FenceToken fence, String value, Pause pause) throws Exception;

    /** The resource's current value; empty when it does not exist (never created, or deleted). */
    protected abstract Optional<String> read(String id) throws Exception;

    /**
     * A fenced create-or-replace; called only if {@link #operations()} contains {@link Operation#UPSERT}.
     *
     * @throws UnsupportedOperationException by default
     */
    protected WriteOutcome upsert(String id, FenceToken fence, String value, Pause pause) throws Exception {
        throw new UnsupportedOperationException("operations() lists UPSERT but upsert(..) is not overridden");
    }

    /**
     * A fenced delete; called only if {@link #operations()} contains {@link Operation#DELETE}.
     *
     * @throws UnsupportedOperationException by default
     */
    protected WriteOutcome delete(String id, FenceToken fence, Pause pause) throws Exception {
        throw new UnsupportedOperationException("operations() lists DELETE but delete(..) is not overridden");
    }

    /** The operations your path offers; default only {@link Operation#WRITE}. */
    protected Set<Operation> operations() {
        return EnumSet.of(Operation.WRITE);
    }

    /** Whether {@link #write} creates an absent or deleted resource (like an upsert); default false (an update). */
    protected boolean writeCreates() {
        return false;
    }

    /** The write rule your path implements; default {@link FencePolicy#SAME_OR_NEWER}. */
    protected FencePolicy policy() {
        return FencePolicy.SAME_OR_NEWER;
    }

    /** The value {@link #create(String)} stores. */
    protected String initialValue() {
        return "initial";
    }

    /**
     * How long the template waits for a writer to pause or finish before it fails the property with
     * "writer never finished". Not a scheduling device: writers are ordered by the template's releases.
     * Default 60 s.
     */
    protected Duration writerGuard() {
        return Duration.ofSeconds(60);
    }

    @Property(tries = 100)
    void staleWritesAreRejectedAndTheRuleHolds(@ForAll("histories") History history) throws Exception {
        check(history);
    }

    /**
     * Histories every run tries, whatever the generator does: an older fence arriving late, two holders
     * racing with the higher fence released first and last, and (where offered) a delete followed by a
     * stale create, on a live and on a never-created resource.
     */
    @Example
    void knownRaces() throws Exception {
        for (History h : knownHistories()) {
            check(h);
        }
    }

    List<History> knownHistories() {
        Set<Operation> ops = operations();
        List<History> known = new ArrayList<>();
        known.add(new History(true, List.of(Step.of(new Write(1, 5)), Step.of(new Write(2, 4)), Step.of(new Write(1, 5)))));
        for (boolean higherFirst : new boolean[] {true, false}) {
            known.add(new History(true, List.of(Step.together(new Write(1, 3), new Write(2, 5), higherFirst))));
            known.add(new History(true, List.of(Step.of(new Write(3, 2)),
                    Step.together(new Write(2, 5), new Write(1, 4), !higherFirst))));
        }
        boolean canCreate = ops.contains(Operation.UPSERT) || writeCreates();
        if (ops.contains(Operation.DELETE) && canCreate) {
            Operation create = ops.contains(Operation.UPSERT) ? Operation.UPSERT : Operation.WRITE;
            for (boolean created : new boolean[] {true, false}) {
                known.add(new History(created, List.of(Step.of(new Write(2, 5, Operation.DELETE)),
                        Step.of(new Write(1, 4, create)), Step.of(new Write(2, 5, create)), Step.of(new Write(1, 4, create)))));
                for (boolean higherFirst : new boolean[] {true, false}) {
                    known.add(new History(created, List.of(Step.together(new Write(1, 3, create),
                            new Write(2, 5, Operation.DELETE), higherFirst))));
                }
            }
        }
        return known;
    }

    private void check(History history) throws Exception {
        for (Step s : history.steps()) {
            for (Write w : s.writes()) {
                if (!operations().contains(w.operation())) {
                    throw new IllegalStateException("history uses " + w.operation() + ", which operations() does not list");
                }
            }
        }
        String id = "fr-" + UUID.randomUUID().toString().substring(0, 12);
        if (history.created()) {
            create(id);
        }
        Model model = new Model(history.created(), history.created() ? initialValue() : null, 0);
        List<String> timeline = new ArrayList<>();
        timeline.add(history.created() ? "resource created, no fence" : "resource never created");
        for (int step = 0; step < history.steps().size(); step++) {
            Step s = history.steps().get(step);
            if (s.writes().size() == 1) {
                Write w = s.writes().getFirst();
                WriteOutcome got = perform(id, w, step, () -> {});
                Judged j = judge(w, step, model);
                timeline.add("step " + step + ": " + w + " -> " + describe(got) + " (stored fence was " + model.fence() + ")");
                Timeline.require(j.matches(got), "outcome contradicts the " + policy() + " rule (expected " + j.expected() + ")", timeline);
                model = j.after();
            } else {
                Write a = s.writes().get(0);
                Write b = s.writes().get(1);
                WriteOutcome[] got;
                try {
                    got = concurrently(id, s, step);
                } catch (WriterSchedule.StuckWriterException e) {
                    timeline.add("step " + step + ": " + a + " and " + b + " at once: " + e.getMessage());
                    throw Timeline.failure("writer never finished", timeline, e);
                }
                timeline.add("step " + step + ": " + a + " and " + b + " at once (released "
                        + describeRelease(s) + ") -> " + describe(got[0]) + " / " + describe(got[1])
                        + " (stored fence was " + model.fence() + ")");
                Optional<String> actual = read(id);
                Model next = serialise(a, got[0], b, got[1], step, model, actual);
                Timeline.require(next != null, "no serial order of the two writes explains these outcomes and the value "
                        + actual.orElse("<none>"), timeline);
                model = next;
            }
            Optional<String> now = read(id);
            timeline.add("        value now " + now.orElse("<none>"));
            Timeline.require(now.equals(model.value()), "the resource holds " + now.orElse("<none>") + " but the rule says "
                    + model.value().orElse("<none>"), timeline);
        }
    }

    private static String describeRelease(Step s) {
        Write first = s.releaseOrder().getFirst() ? s.writes().get(1) : s.writes().get(0);
        return "fence " + first.fence() + " of W" + first.writer() + " first";
    }

    /** The resource as the rule sees it: whether it exists, its value, its stored fence (0 = never fenced). */
    private record Model(boolean exists, String rawValue, long fence) {
        Optional<String> value() {
            return exists ? Optional.of(rawValue) : Optional.empty();
        }
    }

    /** The outcome the rule expects of one write against {@code before}, and the state after it. */
    private record Judged(String expected, Model after, long storedBefore) {
        boolean matches(WriteOutcome got) {
            return switch (got) {
                case WriteOutcome.Applied a -> expected.equals("Applied");
                case WriteOutcome.Stale s -> expected.equals("Stale") && s.currentFence() == storedBefore;
                case WriteOutcome.NotFound n -> expected.equals("NotFound");
            };
        }
    }

    private Judged judge(Write w, int step, Model before) {
        if (!policy().admits(w.fence(), before.fence())) {
            return new Judged("Stale", before, before.fence());
        }
        return switch (w.operation()) {
            case WRITE -> before.exists() || writeCreates()
                    ? new Judged("Applied", new Model(true, w.value(step), w.fence()), before.fence())
                    : new Judged("NotFound", before, before.fence());
            case UPSERT -> new Judged("Applied", new Model(true, w.value(step), w.fence()), before.fence());
            case DELETE -> new Judged("Applied", new Model(false, null, w.fence()), before.fence());
        };
    }

    /** The state after the first serial order (a then b, or b then a) that explains both outcomes and the value; null if none does. */
    private Model serialise(Write a, WriteOutcome oa, Write b, WriteOutcome ob, int step, Model before, Optional<String> actual) {
        for (boolean aFirst : new boolean[] {true, false}) {
            Judged first = judge(aFirst ? a : b, step, before);
            Judged second = judge(aFirst ? b : a, step, first.after());
            if (first.matches(aFirst ? oa : ob) && second.matches(aFirst ? ob : oa) && actual.equals(second.after().value())) {
                return second.after();
            }
        }
        return null;
    }

    private WriteOutcome perform(String id, Write w, int step, Pause pause) throws Exception {
        FenceToken fence = FenceToken.of(w.fence());
        return Objects.requireNonNull(switch (w.operation()) {
            case WRITE -> write(id, fence, w.value(step), pause);
            case UPSERT -> upsert(id, fence, w.value(step), pause);
            case DELETE -> delete(id, fence, pause);
        }, "the path under test returned no outcome");
    }

    private WriteOutcome[] concurrently(String id, Step s, int step) throws Exception {
        List<WriterSchedule.Writer<WriteOutcome>> writers = new ArrayList<>();
        for (Write w : s.writes()) {
            writers.add(pause -> perform(id, w, step, pause::run));
        }
        List<WriteOutcome> outcomes = WriterSchedule.run(writers, s.releaseOrder(), writerGuard());
        return outcomes.toArray(WriteOutcome[]::new);
    }

    private static String describe(WriteOutcome o) {
        return switch (o) {
            case WriteOutcome.Applied a -> "Applied";
            case WriteOutcome.Stale s -> "Stale(current " + s.currentFence() + ")";
            case WriteOutcome.NotFound n -> "NotFound";
        };
    }

    @Provide
    Arbitrary<History> histories() {
        List<Operation> ops = List.copyOf(operations());
        Arbitrary<Operation> operation = Arbitraries.of(ops);
        // Mostly plain writes: deletes and upserts are weighted so that a history usually has a few of them.
        if (ops.size() > 1) {
            List<Tuple.Tuple2<Integer, Operation>> weighted = new ArrayList<>();
            for (Operation op : ops) {
                weighted.add(Tuple.of(op == Operation.WRITE ? 3 : 1, op));
            }
            @SuppressWarnings({"unchecked", "rawtypes"})
            Tuple.Tuple2<Integer, Operation>[] array = weighted.toArray(new Tuple.Tuple2[0]);
            operation = Arbitraries.frequency(array);
        }
        Arbitrary<Write> write = Combinators.combine(Arbitraries.integers().between(1, 3), Arbitraries.longs().between(1, 6),
                operation).as(Write::new);
        Arbitrary<Step> single = write.map(Step::of);
        Arbitrary<Step> pair = Combinators.combine(write, write, Arbitraries.of(false, true)).as(Step::together);
        Arbitrary<Step> step = Arbitraries.frequencyOf(Tuple.of(3, single), Tuple.of(2, pair));
        Arbitrary<Boolean> created = ops.contains(Operation.DELETE) ? Arbitraries.of(true, true, true, false) : Arbitraries.just(true);
        return Combinators.combine(created, step.list().ofMinSize(1).ofMaxSize(8)).as(History::new);
    }
}
