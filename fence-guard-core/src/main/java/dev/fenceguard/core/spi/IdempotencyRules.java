package dev.fenceguard.core.spi;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The two steps every {@link IdempotencyBackend} applies atomically, written once: backends that
 * read then write conditionally (Firestore, the in-memory model) call these; SQL and Lua backends
 * spell the same rules in their statement or script, and the contract suite checks them against
 * these.
 *
 * <p>An entry whose retention has passed counts as absent. Fences are compared, never issued.
 *
 * @since 0.1
 */
public final class IdempotencyRules {

    private IdempotencyRules() {}

    /**
     * The entry after a claim of {@code fence} with {@code fingerprint} at backend time {@code now}.
     * The claim takes the key (a fresh {@link IdempotencyState#IN_PROGRESS} entry with the claimant's
     * fence, expiring at {@code now + ttl}) when there is no entry, or when the entry has the same
     * fingerprint and
     * <ul>
     *   <li>failed retryably, and {@code fence} is not older than the entry's; or</li>
     *   <li>is in progress under the same fence (the holder claiming again: its answer was lost, or it
     *       retries under the same lease), or under an older fence whose claim has run out.</li>
     * </ul>
     * Otherwise the entry stays as it is: a different fingerprint (conflict), a final outcome (replay),
     * a live claim of an older fence (in progress) or a newer fence (the claimant is stale).
     */
    public static IdempotencyEntry claim(Optional<IdempotencyEntry> current, String fingerprint, long fence, Duration ttl,
            Duration retention, Instant now) {
        Instant expires = now.plus(ttl);
        IdempotencyEntry fresh = new IdempotencyEntry(IdempotencyState.IN_PROGRESS, fingerprint, fence, expires,
                expires.plus(retention), new byte[0]);
        if (current.isEmpty() || !now.isBefore(current.get().retainUntil())) {
            return fresh;
        }
        IdempotencyEntry c = current.get();
        if (!c.fingerprint().equals(fingerprint)) {
            return c;
        }
        boolean takes = switch (c.state()) {
            case COMPLETED, FAILED_FINAL -> false;
            case FAILED_RETRYABLE -> fence >= c.fence();
            case IN_PROGRESS -> fence == c.fence() || (fence > c.fence() && !now.isBefore(c.expiresAt()));
        };
        return takes ? fresh : c;
    }

    /**
     * The entry after a record of {@code state} by {@code fence} at backend time {@code now}, or empty
     * if it is refused: only the holder of the newest claim may record, and only once, so a zombie
     * that finishes after a newer holder claimed changes nothing. An expired claim that nobody took
     * over may still be recorded by its holder.
     */
    public static Optional<IdempotencyEntry> record(Optional<IdempotencyEntry> current, long fence, IdempotencyState state,
            byte[] result, Duration retention, Instant now) {
        if (current.isEmpty() || !now.isBefore(current.get().retainUntil())) {
            return Optional.empty();
        }
        IdempotencyEntry c = current.get();
        if (c.state() != IdempotencyState.IN_PROGRESS || c.fence() != fence) {
            return Optional.empty();
        }
        return Optional.of(new IdempotencyEntry(state, c.fingerprint(), fence, now, now.plus(retention), result));
    }

    /** The fence a refused record is told about: the entry's, or 0 when there is none. */
    public static long currentFence(Optional<IdempotencyEntry> current, Instant now) {
        return current.filter(c -> now.isBefore(c.retainUntil())).map(IdempotencyEntry::fence).orElse(0L);
    }
}
