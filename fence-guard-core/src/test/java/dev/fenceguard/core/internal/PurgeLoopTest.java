package dev.fenceguard.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The one purge batch loop, in both its faces: when it stops, what it counts, where each batch starts and
 * what it hands out to resume after. Batches here are a list of record numbers in memory.
 */
class PurgeLoopTest {

    /** 0..n-1 in batches of {@code size}; each batch starts after a position, removes the even numbers it finds. */
    private static class Records {
        final int n;
        final List<Integer> startedAfter = new ArrayList<>();

        Records(int n) {
            this.n = n;
        }

        PurgeLoop.Batch<Integer> batch(Integer after, int size) {
            startedAfter.add(after);
            int from = after == null ? 0 : after + 1;
            int to = Math.min(n, from + size);
            long removed = 0;
            for (int i = from; i < to; i++) {
                removed += i % 2 == 0 ? 1 : 0;
            }
            return new PurgeLoop.Batch<>(to - from, to > from ? to - 1 : null, removed);
        }
    }

    private static PurgeResult run(boolean async, Purge purge, Integer start, Records records, Function<Integer, Object> resume) {
        if (async) {
            return PurgeLoop.runAsync(purge, start, after -> CompletableFuture.completedFuture(records.batch(after, purge.batchSize())),
                    resume).join();
        }
        return PurgeLoop.run(purge, start, after -> records.batch(after, purge.batchSize()), resume);
    }

    @ParameterizedTest(name = "async={0}")
    @ValueSource(booleans = {false, true})
    void runsBatchesUntilOneFindsFewerThanTheBatchSize(boolean async) {
        Records records = new Records(25);
        Purge purge = Purge.ofDefaults().withBatchSize(10).withMaxDuration(Duration.ofHours(1));

        PurgeResult result = run(async, purge, null, records, p -> "at " + p);

        assertThat(result).isEqualTo(new PurgeResult(13, 3, true, Optional.empty()));
        assertThat(records.startedAfter).containsExactly(null, 9, 19);
    }

    @ParameterizedTest(name = "async={0}")
    @ValueSource(booleans = {false, true})
    void aFullLastBatchIsFollowedByAnEmptyOne(boolean async) {
        Records records = new Records(20);
        Purge purge = Purge.ofDefaults().withBatchSize(10).withMaxDuration(Duration.ofHours(1));

        PurgeResult result = run(async, purge, null, records, p -> p);

        assertThat(result).isEqualTo(new PurgeResult(10, 3, true, Optional.empty()));
        assertThat(records.startedAfter).containsExactly(null, 9, 19);
    }

    @ParameterizedTest(name = "async={0}")
    @ValueSource(booleans = {false, true})
    void stopsAfterTheFirstFullBatchOnceItsTimeBoundPassedAndHandsOutItsLastPosition(boolean async) {
        Records records = new Records(100);
        Purge purge = Purge.ofDefaults().withBatchSize(10).withMaxDuration(Duration.ofNanos(1));
        long began = System.nanoTime();
        Records passing = new Records(100) {
            @Override
            PurgeLoop.Batch<Integer> batch(Integer after, int size) {
                while (System.nanoTime() - began < 2) {
                    Thread.onSpinWait(); // the bound (1 ns) has surely passed when the batch ends
                }
                return records.batch(after, size);
            }
        };

        PurgeResult result = run(async, purge, 39, passing, p -> "at " + p);

        assertThat(result).isEqualTo(new PurgeResult(5, 1, false, Optional.of("at 49")));
        assertThat(records.startedAfter).as("the first batch runs whatever the bound, from the start given").containsExactly(39);
    }

    @ParameterizedTest(name = "async={0}")
    @ValueSource(booleans = {false, true})
    void aFailingBatchEndsThePurgeWithItsFailure(boolean async) {
        Purge purge = Purge.ofDefaults().withBatchSize(10).withMaxDuration(Duration.ofHours(1));
        List<Integer> startedAfter = new ArrayList<>();
        IllegalStateException failure = new IllegalStateException("second batch failed");
        Function<Integer, PurgeLoop.Batch<Integer>> batch = after -> {
            startedAfter.add(after);
            if (after != null) {
                throw failure;
            }
            return new PurgeLoop.Batch<>(10, 9, 10);
        };

        if (async) {
            CompletableFuture<PurgeResult> result = PurgeLoop.<Integer>runAsync(purge, null, after -> CompletableFuture.supplyAsync(
                    () -> batch.apply(after), Runnable::run), p -> p);
            assertThatThrownBy(result::join).isInstanceOf(CompletionException.class).hasCause(failure);
        } else {
            assertThatThrownBy(() -> PurgeLoop.<Integer>run(purge, null, batch, p -> p)).isSameAs(failure);
        }
        assertThat(startedAfter).containsExactly(null, 9);
    }
}
