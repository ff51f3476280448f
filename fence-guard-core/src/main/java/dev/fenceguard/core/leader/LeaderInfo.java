package dev.fenceguard.core.leader;

import dev.fenceguard.core.FenceToken;
import java.time.Instant;
import java.util.Objects;

/**
 * What anyone, candidate or not, can see of the current leader: its term and when its lease ends by
 * the backend's clock. It never carries the lock id, so it cannot be used to depose the leader.
 *
 * @param name the leadership's name
 * @param term the current leader's term (its fence)
 * @param expiresAt when the term ends unless renewed, by the backend's clock
 * @since 0.1
 */
public record LeaderInfo(String name, FenceToken term, Instant expiresAt) {
    /** Checks that no component is null. */
    public LeaderInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(term, "term");
        Objects.requireNonNull(expiresAt, "expiresAt");
    }
}
