package dev.fenceguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

/**
 * The template passes a correct fenced resource and fails, with a shrunk timeline, on an unfenced
 * writer and on a check-then-write writer. The fixtures are nested classes, run here through the
 * jqwik engine (surefire does not pick nested classes up by itself).
 */
class FencedResourceTemplateTest {

    /** value|fence per resource id, kept in one map entry so a compute is one atomic step. */
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
    }

    /** Correct: the check and the write are one atomic step. */
    static class AtomicWriter extends MapResource {
        @Override
        protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
            WriteOutcome[] out = new WriteOutcome[1];
            store.compute(id, (k, e) -> {
                long stored = Long.parseLong(e[1]);
                if (FencePolicy.SAME_OR_NEWER.admits(fence, stored)) {
                    out[0] = new WriteOutcome.Applied(id, fence.value());
                    return new String[] {value, Long.toString(fence.value())};
                }
                out[0] = new WriteOutcome.Stale(id, fence.value(), stored, FencePolicy.SAME_OR_NEWER);
                return e;
            });
            return out[0];
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

    private static List<Event> run(Class<?> fixture, int expectedFailures) {
        var results = EngineTestKit.engine("jqwik").selectors(selectClass(fixture)).execute();
        results.testEvents().assertStatistics(s -> s.started(1).failed(expectedFailures));
        return results.testEvents().failed().list();
    }

    @Test
    void aCorrectAtomicWriterPasses() {
        run(AtomicWriter.class, 0);
    }

    @Test
    void anUnfencedWriterFailsWithAShrunkTimeline() {
        Throwable failure = run(UnfencedWriter.class, 1).getFirst().getRequiredPayload(
                org.junit.platform.engine.TestExecutionResult.class).getThrowable().orElseThrow();
        assertThat(failure.getMessage()).contains("timeline:").containsAnyOf("outcome contradicts the SAME_OR_NEWER rule",
                "no serial order of the two writes explains");
        // Shrunk to a minimal story: an older fence applied after a newer one, in one or two steps.
        assertThat(failure.getMessage().lines().filter(l -> l.contains("step ")).count()).isLessThanOrEqualTo(2);
    }

    @Test
    void aCheckThenWriteWriterFailsWhenTwoHoldersRace() {
        Throwable failure = run(CheckThenWriteWriter.class, 1).getFirst().getRequiredPayload(
                org.junit.platform.engine.TestExecutionResult.class).getThrowable().orElseThrow();
        assertThat(failure.getMessage()).contains("timeline:").contains("write at once");
        assertThat(failure.getMessage().lines().filter(l -> l.contains("step ")).count()).isLessThanOrEqualTo(2);
    }
}
