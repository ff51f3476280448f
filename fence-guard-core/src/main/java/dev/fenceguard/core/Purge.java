package dev.fenceguard.core;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How one purge of fence records runs: how many records each batch may remove, how long the purge may
 * keep starting batches, and the position it starts after. Immutable; each {@code with…} returns a copy.
 *
 * <p>One type for every store's purge ({@code FencedWriter.purge} in fence-guard-jooq, and the other
 * stores' purges as they come; docs/fence-lifecycle.md): what a purge may remove is decided by the
 * store's horizon rule, never by these settings, which only bound the work.
 *
 * <pre>{@code
 * PurgeResult first = orders.on(dataSource).purge(Purge.ofDefaults().withBatchSize(500));
 * if (!first.complete()) {   // stopped at its time bound: go on from where it stopped
 *     orders.on(dataSource).purge(Purge.ofDefaults().withBatchSize(500).withStartAfter(first.resumeAfter().orElseThrow()));
 * }
 * }</pre>
 *
 * @since 0.1
 */
public final class Purge {

    /** The most records one batch may remove. */
    public static final int MAX_BATCH_SIZE = 100_000;

    private static final Purge DEFAULTS = new Purge(1_000, Duration.ofSeconds(10), null);

    private final int batchSize;
    private final Duration maxDuration;
    private final Object startAfter;

    private Purge(int batchSize, Duration maxDuration, Object startAfter) {
        this.batchSize = batchSize;
        this.maxDuration = maxDuration;
        this.startAfter = startAfter;
    }

    /** Batches of 1,000, at most 10 seconds, from the first key. */
    public static Purge ofDefaults() {
        return DEFAULTS;
    }

    /**
     * At most {@code batchSize} records per batch; each batch is one atomic step on the store (on SQL one
     * statement, one transaction on a {@code DataSource}), and a purge ends when a batch finds fewer.
     *
     * @throws IllegalArgumentException if {@code batchSize} is not between 1 and {@value #MAX_BATCH_SIZE}
     */
    public Purge withBatchSize(int batchSize) {
        if (batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
            throw new IllegalArgumentException("batchSize must be between 1 and " + MAX_BATCH_SIZE + ", was " + batchSize);
        }
        return new Purge(batchSize, maxDuration, startAfter);
    }

    /**
     * Starts no batch after {@code maxDuration} has passed since the purge began (a batch under way is
     * finished, so a purge may take one batch longer).
     *
     * @throws NullPointerException if {@code maxDuration} is null
     * @throws IllegalArgumentException if it is not positive
     */
    public Purge withMaxDuration(Duration maxDuration) {
        Objects.requireNonNull(maxDuration, "maxDuration");
        if (maxDuration.isNegative() || maxDuration.isZero()) {
            throw new IllegalArgumentException("maxDuration must be positive, was " + maxDuration);
        }
        return new Purge(batchSize, maxDuration, startAfter);
    }

    /**
     * Starts after {@code key} in the store's order: {@link PurgeResult#resumeAfter()} of a purge that
     * stopped at its time bound. On SQL the key is converted to the key column's type when the purge runs.
     *
     * @throws NullPointerException if {@code key} is null
     */
    public Purge withStartAfter(Object key) {
        return new Purge(batchSize, maxDuration, Objects.requireNonNull(key, "key"));
    }

    /** The most records one batch removes. */
    public int batchSize() {
        return batchSize;
    }

    /** How long the purge keeps starting batches. */
    public Duration maxDuration() {
        return maxDuration;
    }

    /** The key the purge starts after, or empty for the first key. */
    public Optional<Object> startAfter() {
        return Optional.ofNullable(startAfter);
    }

    @Override
    public String toString() {
        return "Purge[batchSize=" + batchSize + ", maxDuration=" + maxDuration + (startAfter == null ? "" : ", startAfter=" + startAfter) + "]";
    }
}
