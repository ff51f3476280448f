package dev.fenceguard.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.core.internal.Horizon;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
 * The purge template would catch a broken Redis store: {@link RedisPurgeProperties} passes with the
 * horizon, and the same fenced writes built without one, beside a purge that removes old tombstones (what
 * a user might add to keep fence keys from growing), fail it. Without rule 1 a write of an old fence
 * creates the key again once its tombstone is gone: the template's known races say "STALE WRITE APPLIED".
 * The broken fixture runs only inside this test (through the jqwik engine); anywhere else it is skipped.
 */
class RedisPurgeTemplateTest {

    private static final AtomicBoolean ARMED = new AtomicBoolean();

    /** Skips the broken fixture unless {@link #ARMED}: a wide {@code -Dtest} selects nested classes too. */
    static final class OnlyInsideTheMetaTest implements SkipExecutionHook {
        @Override
        public SkipResult shouldBeSkipped(LifecycleContext context) {
            return ARMED.get() ? SkipResult.doNotSkip() : SkipResult.skip("a broken store, run only by RedisPurgeTemplateTest");
        }
    }

    /**
     * Broken: {@link FencedRedis} without a horizon (no rule 1, tombstones kept), and a purge that deletes
     * every tombstone below {@code tick(TIME - horizon - margin)} of the keys it wrote.
     */
    @AddLifecycleHook(OnlyInsideTheMetaTest.class)
    static class WithoutHorizon extends RedisPurgeProperties {
        private final Set<String> keys = ConcurrentHashMap.newKeySet();

        @Override
        FencedRedis writes() {
            return writesWithoutHorizon();
        }

        @Override
        protected boolean removesOnItsOwn() {
            return false;
        }

        @Override
        protected WriteOutcome write(String key, FenceToken fence, Pause pause) {
            keys.add(key);
            return super.write(key, fence, pause);
        }

        @Override
        protected WriteOutcome delete(String key, FenceToken fence, Pause pause) {
            keys.add(key);
            return super.delete(key, fence, pause);
        }

        @Override
        protected WriteOutcome claim(String key, FenceToken fence, Pause pause) {
            keys.add(key);
            return super.claim(key, fence, pause);
        }

        @Override
        protected void plant(String key, FenceRecord record) {
            keys.add(key);
            if (record.live()) {
                super.plant(key, record);
            } else {
                admin.set(writes().fenceKeyOf(data(key)), Long.toString(record.fence())); // kept: this store expires nothing
            }
        }

        @Override
        protected void purge(Pause pause) {
            long now = ChronoUnit.MICROS.between(java.time.Instant.EPOCH, storeClock());
            long purgeHorizon = ClockFloor.floorAtMicros(now - new Horizon(horizon(), clockMargin()).purgeMicros());
            for (String k : keys) {
                Optional<FenceRecord> r = record(k);
                if (r.isPresent() && !r.get().live() && r.get().fence() < purgeHorizon) {
                    admin.del(writes().fenceKeyOf(data(k)));
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
