package dev.fenceguard.core.singleflight;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.singleflight.Processes.Process;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * Singleflight against the in-memory model: random histories of three processes whose callers ask for
 * one key, whose works finish or fail when the history says, whose lock links freeze (a paused process)
 * and thaw, while a manual clock advances. After every step:
 * <ul>
 *   <li>within a process, at most one work runs at a time (callers share the flight);</li>
 *   <li>each work starts under a greater fence than every work before it;</li>
 *   <li>a publish applies only if no flight with a greater fence has begun (a zombie's is refused);</li>
 *   <li>every caller that got a value got one that was published and applied, never a refused one.</li>
 * </ul>
 * At the end, with every link thawed and every work finishing, every caller has an answer within the max wait.
 */
class SingleflightProperties {

    private static final String KEY = "prop";
    private static final Duration TTL = Duration.ofSeconds(6);

    enum Kind { CALL, FINISH, FAIL, FREEZE, THAW, ADVANCE }

    record Step(Kind kind, int who, int seconds) {}

    private record Work(Process process, long fence, CompletableFuture<String> result) {}

    @Provide
    Arbitrary<List<Step>> histories() {
        Arbitrary<Step> step = Combinators.combine(
                Arbitraries.frequencyOf(
                        Tuple.of(5, Arbitraries.just(Kind.CALL)),
                        Tuple.of(3, Arbitraries.just(Kind.FINISH)),
                        Tuple.of(1, Arbitraries.just(Kind.FAIL)),
                        Tuple.of(1, Arbitraries.just(Kind.FREEZE)),
                        Tuple.of(2, Arbitraries.just(Kind.THAW)),
                        Tuple.of(4, Arbitraries.just(Kind.ADVANCE))),
                Arbitraries.integers().between(0, 2),
                Arbitraries.integers().between(1, 8)).as(Step::new);
        return step.list().ofMinSize(1).ofMaxSize(40);
    }

    @Property(tries = 300)
    void oneComputesAtATimeAndOnlyAppliedResultsReachCallers(@ForAll("histories") List<Step> history) {
        Processes ps = new Processes(3, b -> b.withPollInterval(Duration.ofSeconds(2)).withMaxWait(Duration.ofSeconds(30))
                .withRetention(Duration.ofSeconds(3)));
        List<Work> works = new ArrayList<>();
        List<CompletableFuture<String>> callers = new ArrayList<>();
        long[] lastFence = {0};
        for (Step step : history) {
            Process p = ps.get(step.who());
            switch (step.kind()) {
                case CALL -> callers.add(p.flights.async().run(KEY, TTL, ResultCodec.utf8(), lease -> {
                    long fence = lease.fence().value();
                    assertThat(works.stream().filter(w -> w.process() == p && !w.result().isDone()))
                            .as("after %s: process %d starts a second work while one runs", step, p.id).isEmpty();
                    assertThat(fence).as("after %s: fences of works only grow", step).isGreaterThan(lastFence[0]);
                    lastFence[0] = fence;
                    Work w = new Work(p, fence, new CompletableFuture<>());
                    works.add(w);
                    return w.result();
                }).toCompletableFuture());
                case FINISH -> pending(works, p).ifPresent(w -> w.result().complete("v" + w.fence()));
                case FAIL -> pending(works, p).ifPresent(w -> w.result().completeExceptionally(new IllegalStateException("failed")));
                case FREEZE -> p.link.freeze();
                case THAW -> p.link.thaw();
                case ADVANCE -> ps.advance(Duration.ofSeconds(step.seconds()));
            }
            checkPublishes(ps, step);
            checkAnswers(ps, callers, step);
        }
        ps.all.forEach(p -> p.link.thaw());
        for (int second = 0; second < 35; second++) {
            // works that start meanwhile (a waiter taking over) finish too, as healthy processes' would
            for (Work w : List.copyOf(works)) {
                w.result().complete("v" + w.fence());
            }
            ps.advance(Duration.ofSeconds(1));
        }
        checkPublishes(ps, null);
        assertThat(callers).as("every caller has an answer after the max wait").allSatisfy(c -> assertThat(c).isDone());
        checkAnswers(ps, callers, null);
    }

    private static java.util.Optional<Work> pending(List<Work> works, Process p) {
        return works.stream().filter(w -> w.process() == p && !w.result().isDone()).findFirst();
    }

    /**
     * Replayed from the store's log: a publish applies exactly when its fence is at least the newest
     * fence begun before it, and applied publishes only move forward.
     */
    private static void checkPublishes(Processes ps, Step step) {
        long newestBegun = 0;
        long newestApplied = 0;
        for (String event : ps.store.events) {
            long fence = Long.parseLong(event.substring(0, event.indexOf(' ')));
            if (event.endsWith("begun")) {
                newestBegun = Math.max(newestBegun, fence);
            } else if (event.endsWith("applied")) {
                assertThat(fence).as("after %s: %s", step, ps.store.events).isGreaterThanOrEqualTo(newestBegun)
                        .isGreaterThanOrEqualTo(newestApplied);
                newestApplied = fence;
            } else {
                assertThat(fence).as("after %s: a refused publish is older than a begun flight: %s", step, ps.store.events)
                        .isLessThan(newestBegun);
            }
        }
    }

    private static void checkAnswers(Processes ps, List<CompletableFuture<String>> callers, Step step) {
        List<String> applied = ps.store.publishes.stream().filter(s -> s.endsWith("applied"))
                .map(s -> "v" + s.substring(0, s.indexOf(' '))).toList();
        for (CompletableFuture<String> c : callers) {
            if (c.isDone() && !c.isCompletedExceptionally()) {
                assertThat(applied).as("after %s: a caller got %s", step, c.join()).contains(c.join());
            }
        }
    }
}
