package dev.fenceguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineTestKit;

/** The stateful property fails, with a timeline, on a backend that lets a stranger release a lock, through either face. */
class LockBackendPropertiesCatchBugsTest {

    /** Releases whatever holds the key, whoever asks: the bug "release without owner check". */
    static final class CarelessBackend implements LockBackend {
        private final InMemoryLockBackend inner = new InMemoryLockBackend();
        private final java.util.Map<LockKey, LockId> holders = new java.util.concurrent.ConcurrentHashMap<>();

        @Override
        public String name() {
            return "careless";
        }

        @Override
        public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
            Optional<Grant> g = inner.tryAcquire(key, lockId, ttl);
            g.ifPresent(x -> holders.put(key, lockId));
            return CompletableFuture.completedFuture(g);
        }

        @Override
        public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
            LockId holder = holders.get(key);
            return CompletableFuture.completedFuture(holder != null && inner.release(key, holder));
        }

        @Override
        public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
            return inner.extend(key, lockId, ttl, timeout);
        }

        @Override
        public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
            return inner.lookup(key, timeout);
        }
    }

    static class CarelessBackendProperties extends LockBackendProperties {
        private final CarelessBackend backend = new CarelessBackend();

        @Override
        protected LockBackend backend() {
            return backend;
        }
    }

    @Test
    void aReleaseWithoutOwnerCheckIsCaughtAndShrunkThroughBothFaces() {
        var results = EngineTestKit.engine("jqwik").selectors(selectClass(CarelessBackendProperties.class)).execute();
        results.testEvents().assertStatistics(s -> s.started(2).failed(2));
        for (var failed : results.testEvents().failed().list()) {
            Throwable failure = failed.getRequiredPayload(TestExecutionResult.class).getThrowable().orElseThrow();
            assertThat(failure.getMessage()).contains("release disagrees with the model").contains("timeline:");
            // Shrunk to the minimal story, two actions: one client acquires, a stranger releases.
            String timeline = failure.getMessage().substring(failure.getMessage().indexOf("timeline:"));
            assertThat(timeline.lines().filter(l -> l.contains("-> real")).count()).isEqualTo(2);
            assertThat(timeline).contains("release (a stranger) -> real true, model false");
        }
        assertThat(results.testEvents().failed().list()).extracting(e -> e.getTestDescriptor().getDisplayName())
                .containsExactlyInAnyOrder("theBlockingClientAgreesWithTheReferenceModel", "theAsyncClientAgreesWithTheReferenceModel");
    }
}
