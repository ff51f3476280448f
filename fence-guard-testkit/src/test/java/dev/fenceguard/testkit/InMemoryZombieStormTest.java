package dev.fenceguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import org.junit.jupiter.api.Test;

class InMemoryZombieStormTest {

    /** value and fence under one monitor: a correct fenced counter. */
    static final class Counter implements ZombieStorm.FencedCounter {
        long value;
        long fence;
        final boolean fenced;

        Counter(boolean fenced) {
            this.fenced = fenced;
        }

        @Override
        public synchronized WriteOutcome claim(FenceToken f) {
            if (fenced && !FencePolicy.SAME_OR_NEWER.admits(f, fence)) {
                return new WriteOutcome.Stale("counter", f.value(), fence, FencePolicy.SAME_OR_NEWER);
            }
            fence = Math.max(fence, f.value());
            return new WriteOutcome.Applied("counter", f.value());
        }

        @Override
        public synchronized long read() {
            return value;
        }

        @Override
        public synchronized WriteOutcome write(long v, FenceToken f) {
            if (fenced && !FencePolicy.SAME_OR_NEWER.admits(f, fence)) {
                return new WriteOutcome.Stale("counter", f.value(), fence, FencePolicy.SAME_OR_NEWER);
            }
            value = v;
            fence = fenced ? f.value() : Math.max(fence, f.value());
            return new WriteOutcome.Applied("counter", f.value());
        }
    }

    @Test
    void aFencedCounterSurvivesTheStorm() throws Exception {
        LockClient locks = LockClient.builder(new InMemoryLockBackend()).withMetrics(LockMetrics.none()).build();
        ZombieStorm.Result r = ZombieStorm.builder(locks, "counter", new Counter(true)).build().run();
        System.out.println("in-memory " + r.summary());
        assertThat(r.attempts()).isEqualTo(90);
        assertThat(r.acquiredByFace()).as("both faces took part").containsOnlyKeys(Face.BLOCKING, Face.ASYNC)
                .allSatisfy((face, n) -> assertThat(n).as(face.toString()).isPositive());
        assertThat(r.stalls()).as("the storm must actually stall some workers").isPositive();
        assertThat(r.rejectedStale()).as("zombies were refused").isPositive();
        r.requireSafe();
        assertThat(r.finalValue()).isEqualTo(r.applied());
    }

    @Test
    void anUnfencedCounterLosesUpdatesAndTheStormSaysSo() throws Exception {
        LockClient locks = LockClient.builder(new InMemoryLockBackend()).withMetrics(LockMetrics.none()).build();
        ZombieStorm.Result r = ZombieStorm.builder(locks, "counter", new Counter(false)).withStallProbability(0.5).build().run();
        System.out.println("in-memory, unfenced: " + r.summary());
        assertThat(r.isSafe()).as("an unfenced counter must be caught: " + r.summary()).isFalse();
    }
}
