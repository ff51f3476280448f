package dev.fenceguard.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * One sweep timer for all calls still fires each at its own deadline, however they arrive. Driven by a
 * hand-moved clock and scheduler, so the outcome never depends on how fast this machine runs the test.
 */
class DeadlinesTest {

    /** A clock and a delay scheduler that move only when the test says so. */
    private static final class HandClock {
        record Task(long due, long seq, Runnable run) {}

        long now = 1_000_000_000L;
        long seq;
        final List<Long> scheduledFor = new ArrayList<>();
        final PriorityQueue<Task> tasks = new PriorityQueue<>((a, b) -> a.due != b.due ? Long.compare(a.due, b.due) : Long.compare(a.seq, b.seq));

        void schedule(long delayNanos, Runnable task) {
            scheduledFor.add(now + delayNanos);
            tasks.add(new Task(now + delayNanos, seq++, task));
        }

        /** Moves to {@code target}, running every task due on the way at its own time. */
        void advanceTo(long target) {
            while (!tasks.isEmpty() && tasks.peek().due <= target) {
                Task t = tasks.poll();
                now = Math.max(now, t.due);
                t.run.run();
            }
            now = target;
        }
    }

    private static long ms(long millis) {
        return TimeUnit.MILLISECONDS.toNanos(millis);
    }

    @Test
    void eachActionRunsAtItsDeadlineEvenWhenAnEarlierOneArrivesLater() {
        HandClock clock = new HandClock();
        Deadlines deadlines = new Deadlines(() -> clock.now, clock::schedule);
        long start = clock.now;
        // Arrival order differs from deadline order: each earlier deadline must re-arm the sweep.
        List<Long> offsetsMillis = List.of(400L, 100L, 250L, 50L, 400L, 300L);
        Map<Integer, Long> firedAt = new TreeMap<>();
        for (int i = 0; i < offsetsMillis.size(); i++) {
            int n = i;
            deadlines.add(start + ms(offsetsMillis.get(i)), () -> firedAt.put(n, clock.now));
        }
        AtomicBoolean removedRan = new AtomicBoolean();
        deadlines.remove(deadlines.add(start + ms(150), () -> removedRan.set(true)));

        clock.advanceTo(start + ms(399));
        assertThat(firedAt).as("nothing due at 400 ms has fired at 399 ms").doesNotContainKeys(0, 4);
        clock.advanceTo(start + ms(1000));
        for (int i = 0; i < offsetsMillis.size(); i++) {
            assertThat(firedAt.get(i)).as("action %d fired at its deadline, %d ms", i, offsetsMillis.get(i))
                    .isEqualTo(start + ms(offsetsMillis.get(i)));
        }
        assertThat(removedRan).as("an answered call's action never runs").isFalse();
    }

    @Test
    void aSteadyStreamOfCallsThatAnswerInTimeRunsNoActionAndArmsOneSweep() {
        HandClock clock = new HandClock();
        Deadlines deadlines = new Deadlines(() -> clock.now, clock::schedule);
        AtomicBoolean ran = new AtomicBoolean();
        for (int i = 0; i < 100_000; i++) {
            deadlines.remove(deadlines.add(clock.now + ms(20), () -> ran.set(true)));
            clock.now += 100; // 100 ns per call
        }
        AtomicBoolean later = new AtomicBoolean();
        long laterAt = clock.now + ms(60);
        deadlines.add(laterAt, () -> later.set(true));
        clock.advanceTo(laterAt);
        assertThat(ran).as("no answered call's action ran").isFalse();
        assertThat(later).as("the call left unanswered expired").isTrue();
        assertThat(clock.scheduledFor).as("sweeps armed for 100,001 calls: one for the stream, one for the late call")
                .hasSizeLessThanOrEqualTo(3);
    }
}
