package dev.fenceguard.core;

import java.util.Objects;
import java.util.Optional;

/**
 * What one purge of fence records did (see {@link Purge}).
 *
 * @param removed records removed
 * @param batches batches run
 * @param complete whether it went through to the last key; false if it stopped at its time bound
 * @param resumeAfter when not complete, the key to start the next purge after
 *     ({@link Purge#withStartAfter}); empty when complete
 * @since 0.1
 */
public record PurgeResult(long removed, int batches, boolean complete, Optional<Object> resumeAfter) {

    /**
     * @throws NullPointerException if {@code resumeAfter} is null
     * @throws IllegalArgumentException if {@code removed} or {@code batches} is negative, or
     *     {@code resumeAfter} is present on a complete purge or absent on one that is not
     */
    public PurgeResult {
        Objects.requireNonNull(resumeAfter, "resumeAfter");
        if (removed < 0 || batches < 0) {
            throw new IllegalArgumentException("removed and batches must not be negative, were " + removed + " and " + batches);
        }
        if (complete == resumeAfter.isPresent()) {
            throw new IllegalArgumentException("a complete purge has no key to resume after, and one that stopped has one");
        }
    }
}
