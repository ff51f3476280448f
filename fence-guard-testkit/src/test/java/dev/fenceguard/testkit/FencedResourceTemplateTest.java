package dev.fenceguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

/**
 * The template passes a correct fenced resource and fails, on every run, on an unfenced writer, on a
 * check-then-write writer and on deletes that forget the fence. The fixtures are nested classes, run
 * here through the jqwik engine (surefire does not pick nested classes up by itself). Each fixture has
 * two tests: the generated property and the known races every run tries.
 */
class FencedResourceTemplateTest {

    /** value|fence per resource id (value null: deleted, the fence kept), one map entry so a compute is atomic. */
    abstract static class MapResource extends FencedResourceProperties {
        final Map<String, String[]> store = new ConcurrentHashMap<>();

        @Override
        protected void create(String id) {
            store.put(id, new String[] {initialValue(), "0"});
        }

        @Override
        protected Optional<String> read(String id) {
            return Optional.ofNullable(store.get(id)).map(e -> e[0]);
        }

        /** One atomic step: {@code newValue} (null deletes) replaces the entry if the rule admits the fence. */
        WriteOutcome atomically(String id, FenceToken fence, String newValue, boolean creates) {
            WriteOutcome[] out = new WriteOutcome[1];
            store.compute(id, (k, e) -> {
                long stored = e == null ? 0 : Long.parseLong(e[1]);
                if (!FencePolicy.SAME_OR_NEWER.admits(fence, stored)) {
                    out[0] = new WriteOutcome.Stale(id, fence.value(), stored, FencePolicy.SAME_OR_NEWER);
                    return e;
                }
                boolean exists = e != null && e[0] != null;
                if (!exists && !creates && newValue != null) {
                    out[0] = new WriteOutcome.NotFound(id);
                    return e;
                }
                out[0] = new WriteOutcome.Applied(id, fence.value());
                return new String[] {newValue, Long.toString(fence.value())};
            });
            return out[0];
        }
    }

    /** Correct: every check and its write are one atomic step; deletes keep the fence, even of absent ids. */
    static class AtomicWriter extends MapResource {
        @Override
        protected Set<Operation> operations() {
            return EnumSet.allOf(Operation.class);
        }

        @Override
        protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
            return atomically(id, fence, value, false);
        }

        @Override
        protected WriteOutcome upsert(String id, FenceToken fence, String value, Pause pause) {
            return atomically(id, fence, value, true);
        }

        @Override
        protected WriteOutcome delete(String id, FenceToken fence, Pause pause) {
            return atomically(id, fence, null, true);
        }
    }

    /** Correct and create-on-write (like Redis SET), with deletes. */
    static class AtomicSetWriter extends AtomicWriter {
        @Override
        protected Set<Operation> operations() {
            return EnumSet.of(Operation.WRITE, Operation.DELETE);
        }

        @Override
        protected boolean writeCreates() {
            return true;
        }

        @Override
        protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
            return atomically(id, fence, value, true);
        }
    }

    /** Broken: ignores the fence (it still reports Applied, as an unfenced UPDATE would). */
    static class UnfencedWriter extends MapResource {
        @Override
        protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
            store.put(id, new String[] {value, Long.toString(fence.value())});
            return new WriteOutcome.Applied(id, fence.value());
        }
    }

    /** Broken: reads the fence, compares in the application, then writes (the seeds' trap). */
    static class CheckThenWriteWriter extends MapResource {
        @Override
        protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
            long stored = Long.parseLong(store.get(id)[1]);
            if (!FencePolicy.SAME_OR_NEWER.admits(fence, stored)) {
                return new WriteOutcome.Stale(id, fence.value(), stored, FencePolicy.SAME_OR_NEWER);
            }
            pause.pause(); // a process can stall right here
            store.put(id, new String[] {value, Long.toString(fence.value())});
            return new WriteOutcome.Applied(id, fence.value());
        }
    }

    /** Broken: a fenced delete that removes the row and its fence (a hard DELETE), so a stale upsert brings it back. */
    static class HardDeleteWriter extends AtomicWriter {
        @Override
        protected WriteOutcome delete(String id, FenceToken fence, Pause pause) {
            WriteOutcome out = atomically(id, fence, null, true);
            if (out.isApplied()) {
                store.remove(id);
            }
            return out;
        }
    }

    /** Broken: deleting an id that was never created records nothing (the hole issue #10 closed). */
    static class ForgetfulAbsentDeleteWriter extends AtomicWriter {
        @Override
        protected WriteOutcome delete(String id, FenceToken fence, Pause pause) {
            if (!store.containsKey(id)) {
                return new WriteOutcome.NotFound(id);
            }
            return atomically(id, fence, null, true);
        }
    }

    private static EngineExecutionResults run(Class<?> fixture) {
        return EngineTestKit.engine("jqwik").selectors(selectClass(fixture)).execute();
    }

    private static Throwable failureOf(EngineExecutionResults results, String method) {
        Event event = results.testEvents().failed().stream()
                .filter(e -> e.getTestDescriptor().getLegacyReportingName().contains(method)
                        || e.getTestDescriptor().getDisplayName().contains(method))
                .findFirst().orElseThrow(() -> new AssertionError(method + " did not fail"));
        return event.getRequiredPayload(TestExecutionResult.class).getThrowable().orElseThrow();
    }

    private static long steps(Throwable failure) {
        return failure.getMessage().lines().filter(l -> l.startsWith("  step ")).count();
    }

    @Test
    void aCorrectAtomicWriterWithDeletesAndUpsertsPasses() {
        run(AtomicWriter.class).testEvents().assertStatistics(s -> s.started(2).failed(0));
    }

    @Test
    void aCorrectCreateOnWriteWriterPasses() {
        run(AtomicSetWriter.class).testEvents().assertStatistics(s -> s.started(2).failed(0));
    }

    @Test
    void anUnfencedWriterFailsOnEveryRunWithAShrunkTimeline() {
        EngineExecutionResults results = run(UnfencedWriter.class);
        results.testEvents().assertStatistics(s -> s.started(2).failed(2));
        assertThat(failureOf(results, "knownRaces").getMessage()).contains("outcome contradicts the SAME_OR_NEWER rule");
        Throwable shrunk = failureOf(results, "staleWritesAreRejectedAndTheRuleHolds");
        assertThat(shrunk.getMessage()).contains("timeline:");
        // Shrunk to a minimal story: an older fence applied after a newer one, in one or two steps.
        assertThat(steps(shrunk)).isBetween(1L, 2L);
    }

    @Test
    void aCheckThenWriteWriterFailsOnEveryRunWhenTwoHoldersRace() {
        EngineExecutionResults results = run(CheckThenWriteWriter.class);
        // The known races release the higher fence first on every run: this failure is certain.
        assertThat(failureOf(results, "knownRaces").getMessage()).contains("at once (released fence 5 of W2 first)")
                .contains("no serial order of the two writes explains");
        // The property finds it too: a concurrent pair with two admitted fences, the higher released first.
        Throwable shrunk = failureOf(results, "staleWritesAreRejectedAndTheRuleHolds");
        assertThat(shrunk.getMessage()).contains("at once");
        assertThat(steps(shrunk)).isBetween(1L, 2L);
        results.testEvents().assertStatistics(s -> s.started(2).failed(2));
    }

    @Test
    void aHardDeleteFailsOnEveryRunWhenAStaleCreateFollows() {
        EngineExecutionResults results = run(HardDeleteWriter.class);
        assertThat(failureOf(results, "knownRaces").getMessage()).contains("delete fence 5").contains("upsert fence 4");
        assertThat(steps(failureOf(results, "staleWritesAreRejectedAndTheRuleHolds"))).isBetween(1L, 3L);
        results.testEvents().assertStatistics(s -> s.started(2).failed(2));
    }

    @Test
    void aDeleteOfANeverCreatedResourceMustKeepItsFence() {
        EngineExecutionResults results = run(ForgetfulAbsentDeleteWriter.class);
        assertThat(failureOf(results, "knownRaces").getMessage()).contains("resource never created").contains("delete fence 5");
        results.testEvents().assertStatistics(s -> s.started(2).failed(2));
    }

    @Test
    void knownRacesCoverBothReleaseOrdersAndDeleteThenStaleCreate() {
        var known = new AtomicWriter().knownHistories();
        assertThat(known).anySatisfy(h -> assertThat(h.toString()).contains("release [true]"))
                .anySatisfy(h -> assertThat(h.toString()).contains("release [false]"))
                .anySatisfy(h -> assertThat(h.toString()).startsWith("never created").contains("delete fence 5, W1 upsert fence 4"));
        assertThat(new UnfencedWriter().knownHistories()).allSatisfy(h -> assertThat(h.toString()).doesNotContain("delete"));
    }
}
