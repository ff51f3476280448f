package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.core.internal.Horizon;
import java.util.concurrent.atomic.AtomicBoolean;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.LifecycleContext;
import net.jqwik.api.lifecycle.SkipExecutionHook;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

/**
 * The purge template would catch a broken Firestore store: {@link FirestorePurgeTemplateProperties} passes
 * with the horizon, and the same fenced writes built without one, beside a purge that deletes old
 * tombstones (what a user might write to keep a collection from growing, since {@link FencedFirestore#purge}
 * refuses writes without a horizon), fail it. Without rule 1 a write of an old fence creates the document
 * again once its tombstone is gone: the template's known races say "STALE WRITE APPLIED". The broken
 * fixture runs only inside this test (through the jqwik engine); anywhere else it is skipped.
 */
class FirestorePurgeTemplateTest {

    private static final AtomicBoolean ARMED = new AtomicBoolean();

    /** Skips the broken fixture unless {@link #ARMED}: a wide {@code -Dtest} selects nested classes too. */
    static final class OnlyInsideTheMetaTest implements SkipExecutionHook {
        @Override
        public SkipResult shouldBeSkipped(LifecycleContext context) {
            return ARMED.get() ? SkipResult.doNotSkip() : SkipResult.skip("a broken store, run only by FirestorePurgeTemplateTest");
        }
    }

    /**
     * Broken: {@link FencedFirestore} without a horizon (no rule 1), in a collection of its own, and a purge
     * that deletes every tombstone below {@code tick(readTime - horizon - margin)}, raw.
     */
    @AddLifecycleHook(OnlyInsideTheMetaTest.class)
    static class WithoutHorizon extends FirestorePurgeTemplateProperties {

        @Override
        FencedFirestore writes() {
            return writesWithoutHorizon();
        }

        @Override
        CollectionReference collection() {
            return db().collection("purge-template-no-horizon");
        }

        @Override
        protected void purge(Pause pause) throws Exception {
            long now = java.time.temporal.ChronoUnit.MICROS.between(java.time.Instant.EPOCH, storeClock());
            long purgeHorizon = ClockFloor.floorAtMicros(now - new Horizon(horizon(), clockMargin()).purgeMicros());
            for (QueryDocumentSnapshot d : collection().whereEqualTo("_deleted", true).get().get().getDocuments()) {
                Long fence = d.getLong("_fence");
                if (fence != null && fence < purgeHorizon) {
                    d.getReference().delete().get();
                }
            }
        }
    }

    @Test
    void writesWithoutTheHorizonFailTheTemplateOnceAPurgeRemovedATombstone() {
        EngineExecutionResults results;
        ARMED.set(true);
        try {
            results = EngineTestKit.engine("jqwik").selectors(selectClass(WithoutHorizon.class)).execute();
        } finally {
            ARMED.set(false);
        }
        Event knownRaces = results.testEvents().failed().stream()
                .filter(e -> e.getTestDescriptor().getDisplayName().contains("knownRaces")).findFirst()
                .orElseThrow(() -> new AssertionError("knownRaces did not fail on a store without the horizon"));
        Throwable failure = knownRaces.getRequiredPayload(TestExecutionResult.class).getThrowable().orElseThrow();
        assertThat(failure.getMessage()).contains("STALE WRITE APPLIED");
        // The generated property fails as well: a write below the horizon on a key with no record is applied.
        results.testEvents().assertStatistics(s -> s.started(2).failed(2));
    }
}
