package dev.fenceguard.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** One sweep timer for all calls still fires each at its own deadline, however they arrive. */
class DeadlinesTest {

    private static final long SLACK = Duration.ofMillis(100).toNanos();

    @Test
    void eachActionRunsAtItsDeadlineEvenWhenAnEarlierOneArrivesLater() throws Exception {
        Deadlines deadlines = new Deadlines();
        long start = System.nanoTime();
        // Arrival order differs from deadline order: each earlier deadline must re-arm the sweep.
        List<Long> offsetsMillis = List.of(400L, 100L, 250L, 50L, 400L, 300L);
        CountDownLatch fired = new CountDownLatch(offsetsMillis.size());
        ConcurrentHashMap<Integer, Long> firedAt = new ConcurrentHashMap<>();
        for (int i = 0; i < offsetsMillis.size(); i++) {
            int n = i;
            deadlines.add(start + TimeUnit.MILLISECONDS.toNanos(offsetsMillis.get(i)), () -> {
                firedAt.put(n, System.nanoTime());
                fired.countDown();
            });
        }
        AtomicBoolean removedRan = new AtomicBoolean();
        deadlines.remove(deadlines.add(start + TimeUnit.MILLISECONDS.toNanos(150), () -> removedRan.set(true)));

        assertThat(fired.await(10, TimeUnit.SECONDS)).isTrue();
        for (int i = 0; i < offsetsMillis.size(); i++) {
            long deadline = start + TimeUnit.MILLISECONDS.toNanos(offsetsMillis.get(i));
            assertThat(firedAt.get(i) - deadline).as("action %d (%d ms) late by", i, offsetsMillis.get(i))
                    .isGreaterThanOrEqualTo(0).isLessThanOrEqualTo(SLACK);
        }
        assertThat(removedRan).as("an answered call's action never runs").isFalse();
    }

    @Test
    void aSteadyStreamOfCallsThatAnswerInTimeRunsNoAction() throws Exception {
        Deadlines deadlines = new Deadlines();
        AtomicBoolean ran = new AtomicBoolean();
        for (int i = 0; i < 100_000; i++) {
            deadlines.remove(deadlines.add(System.nanoTime() + Duration.ofMillis(20).toNanos(), () -> ran.set(true)));
        }
        CountDownLatch later = new CountDownLatch(1);
        deadlines.add(System.nanoTime() + Duration.ofMillis(60).toNanos(), later::countDown);
        assertThat(later.await(10, TimeUnit.SECONDS)).isTrue(); // every earlier sweep has run by now
        assertThat(ran).isFalse();
    }
}
