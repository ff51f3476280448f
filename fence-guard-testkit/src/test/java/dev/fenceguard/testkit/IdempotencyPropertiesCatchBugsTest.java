package dev.fenceguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.memory.InMemoryIdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyEntry;
import dev.fenceguard.core.spi.IdempotencyState;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.ShrinkingMode;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineTestKit;

/** The idempotency property fails, with a shrunk timeline, on a store that records without a fence check (the seeds' bug). */
class IdempotencyPropertiesCatchBugsTest {

    /** Records as the claim's holder whatever fence the recorder carries: a zombie overwrites its successor. */
    static final class UnfencedBackend implements IdempotencyBackend {
        private final InMemoryIdempotencyBackend inner = new InMemoryIdempotencyBackend();

        @Override
        public String name() {
            return "unfenced";
        }

        @Override
        public CompletionStage<IdempotencyEntry> claim(LockKey key, String fingerprint, long fence, Duration ttl, Duration retention,
                Duration timeout) {
            return inner.claim(key, fingerprint, fence, ttl, retention, timeout);
        }

        @Override
        public CompletionStage<OptionalLong> record(LockKey key, long fence, IdempotencyState state, byte[] result, Duration retention,
                Duration timeout) {
            long holder = inner.lookup(key, timeout).toCompletableFuture().join().map(IdempotencyEntry::fence).orElse(fence);
            return inner.record(key, holder, state, result, retention, timeout);
        }

        @Override
        public CompletionStage<Optional<IdempotencyEntry>> lookup(LockKey key, Duration timeout) {
            return inner.lookup(key, timeout);
        }

        @Override
        public CompletionStage<Integer> purge(int limit, Duration timeout) {
            return inner.purge(limit, timeout);
        }
    }

    static class UnfencedBackendProperties extends IdempotencyBackendProperties {
        private final UnfencedBackend backend = new UnfencedBackend();

        @Override
        protected IdempotencyBackend backend() {
            return backend;
        }

        /**
         * The same property with a fixed seed and full shrinking: jqwik's shrinking stops at a local
         * minimum, which for some seeds is longer than two steps (seed -8969791253185239486 stops at
         * claim(f2), claim(f1), claim(f1), record(f1)); and its default bound of 10 s of wall time cut
         * shrinking short on a loaded machine.
         */
        @Override
        @Property(tries = 25, seed = "42", shrinking = ShrinkingMode.FULL)
        void theBackendAgreesWithTheReferenceModel(@ForAll("sequences") List<Step> steps) {
            super.theBackendAgreesWithTheReferenceModel(steps);
        }
    }

    @Test
    void aRecordWithoutAFenceCheckIsCaughtAndShrunk() {
        var results = EngineTestKit.engine("jqwik").selectors(selectClass(UnfencedBackendProperties.class)).execute();
        results.testEvents().assertStatistics(s -> s.started(1).failed(1));
        Throwable failure = results.testEvents().failed().list().get(0).getRequiredPayload(TestExecutionResult.class)
                .getThrowable().orElseThrow();
        assertThat(failure.getMessage()).contains("the backend disagrees with the model").contains("timeline:");
        // Shrunk to the minimal story: a claim, then a record by another fence that the model refuses.
        String timeline = failure.getMessage().substring(failure.getMessage().indexOf("timeline:"));
        assertThat(timeline.lines().filter(l -> l.contains(") -> ")).count()).isEqualTo(2);
        assertThat(timeline).containsPattern("claim\\(k\\d, fp\\d, fence \\d\\) -> IN_PROGRESS")
                .containsPattern("record\\(k\\d, fence \\d, \\w+, result \\d\\) -> OptionalLong.empty   MODEL: OptionalLong\\[\\d\\]");
    }
}
