package dev.fenceguard.core.internal;

import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * The batch loop of every store's purge (docs/fence-lifecycle.md), one owner for when a purge stops and
 * what it reports: batches run one after another, each starting after the last position the one before
 * examined; the purge is complete when a batch examines fewer records than the batch size, and stops,
 * resumable after that position, when the purge's {@link Purge#maxDuration()} has passed since it began.
 * The time bound is checked after each batch, so the first batch always runs and a batch under way is
 * finished. What a batch removes, and where positions come from, is the store's.
 */
public final class PurgeLoop {

    private PurgeLoop() {}

    /**
     * What one batch did.
     *
     * @param examined records it looked at (fewer than the batch size: the store is done)
     * @param last the position of the last record it looked at, the next batch's start; null if it looked at none
     *     (may be null too when it looked at fewer than the batch size: no batch follows, so none needs it)
     * @param removed records it removed
     * @param <C> the store's position (a key, or a cursor)
     */
    public record Batch<C>(int examined, C last, long removed) {}

    /**
     * Runs {@code purge}'s batches in the caller's thread: each one is {@code batch} applied to the position
     * to start after ({@code start} first, null for the first record).
     *
     * @param resumeAfter the position as {@link PurgeResult#resumeAfter()} hands it out
     * @throws RuntimeException whatever a batch throws, as it threw it (the batches before it stay done)
     */
    public static <C> PurgeResult run(Purge purge, C start, Function<? super C, Batch<C>> batch,
            Function<? super C, Object> resumeAfter) {
        Tally<C> tally = new Tally<>(purge, resumeAfter);
        C after = start;
        while (true) {
            Batch<C> done = batch.apply(after);
            PurgeResult result = tally.add(done);
            if (result != null) {
                return result;
            }
            after = done.last();
        }
    }

    /**
     * Runs {@code purge}'s batches one after another, each started when the one before completed: each one
     * is {@code batch} applied to the position to start after ({@code start} first, null for the first
     * record).
     *
     * @param resumeAfter the position as {@link PurgeResult#resumeAfter()} hands it out
     * @return completes with the result, or with the first batch's failure (the batches before it stay done)
     */
    public static <C> CompletableFuture<PurgeResult> runAsync(Purge purge, C start,
            Function<? super C, ? extends CompletionStage<Batch<C>>> batch, Function<? super C, Object> resumeAfter) {
        return new Tally<C>(purge, resumeAfter).from(start, batch);
    }

    /** The counts of one purge and its decision after each batch. Used by one batch at a time. */
    private static final class Tally<C> {
        private final Purge purge;
        private final Function<? super C, Object> resumeAfter;
        private final long began = System.nanoTime();
        private long removed;
        private int batches;

        Tally(Purge purge, Function<? super C, Object> resumeAfter) {
            this.purge = purge;
            this.resumeAfter = resumeAfter;
        }

        /** Counts {@code done}: the purge's result if it ends here, null if another batch is to run. */
        PurgeResult add(Batch<C> done) {
            batches++;
            removed += done.removed();
            if (done.examined() < purge.batchSize()) {
                return new PurgeResult(removed, batches, true, Optional.empty());
            }
            if (System.nanoTime() - began >= purge.maxDuration().toNanos()) {
                return new PurgeResult(removed, batches, false, Optional.of(resumeAfter.apply(done.last())));
            }
            return null;
        }

        CompletableFuture<PurgeResult> from(C after, Function<? super C, ? extends CompletionStage<Batch<C>>> batch) {
            return batch.apply(after).toCompletableFuture().thenCompose(done -> {
                PurgeResult result = add(done);
                return result != null ? CompletableFuture.completedFuture(result) : from(done.last(), batch);
            });
        }
    }
}
