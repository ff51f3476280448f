package dev.fenceguard.redis;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyEntry;
import dev.fenceguard.core.spi.IdempotencyState;
import dev.fenceguard.redis.internal.RedisHandle;
import dev.fenceguard.redis.internal.RedisKeys;
import dev.fenceguard.redis.internal.Script;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * An idempotency backend on Redis through Lettuce (standalone, Sentinel or Cluster), for a
 * {@link dev.fenceguard.core.idempotency.IdempotencyStore}. Get it from
 * {@link FenceGuardRedis#idempotencyBackend()}, which owns the connection and the key prefix.
 *
 * <p>One hash per key, {@code <prefix>{<key>}:idem}: the hash tag is the one of the lock of the same
 * name, so on a Cluster the entry and that lock share a slot. Fields: {@code s} state
 * ({@code P C R F}), {@code fp} fingerprint, {@code f} fence, {@code e} claim expiry or recorded-at and
 * {@code r} retain-until (server milliseconds), {@code v} the result in base64. Claim, record and lookup
 * are one Lua script each, judged by the server's {@code TIME}; the hash expires at {@code r} by
 * itself ({@code PEXPIREAT}), so {@link #purge} has nothing to do and answers 0.
 *
 * <p>Every call is asynchronous and bounded like the lock backend's. Thread-safe; no lifecycle of its own.
 *
 * @since 0.1
 */
public final class RedisIdempotencyBackend implements IdempotencyBackend {

    private static final Script CLAIM = Script.load("idem_claim");
    private static final Script RECORD = Script.load("idem_record");
    private static final Script LOOKUP = Script.load("idem_lookup");

    private final RedisHandle redis;
    private final String prefix;

    RedisIdempotencyBackend(RedisHandle redis, String prefix) {
        this.redis = redis;
        this.prefix = prefix;
    }

    @Override
    public String name() {
        return "redis";
    }

    /** The Redis key holding the entry of {@code key} (for operators; see the class comment). */
    public String entryKeyOf(String key) {
        return RedisKeys.idempotencyKey(prefix, LockKey.of(key));
    }

    @Override
    public CompletionStage<IdempotencyEntry> claim(LockKey key, String fingerprint, long fence, Duration ttl, Duration retention,
            Duration timeout) {
        return redis.multi(CLAIM, key.value(), keys(key), fingerprint, Long.toString(fence),
                Long.toString(ttl.toMillis()), Long.toString(retention.toMillis())).thenApply(r -> entry(key, r));
    }

    @Override
    public CompletionStage<OptionalLong> record(LockKey key, long fence, IdempotencyState state, byte[] result, Duration retention,
            Duration timeout) {
        return redis.integer(RECORD, key.value(), keys(key), Long.toString(fence),
                String.valueOf(state.code()), Base64.getEncoder().encodeToString(result), Long.toString(retention.toMillis()))
                .thenApply(n -> n == 0 ? OptionalLong.empty() : OptionalLong.of(Math.max(0, n)));
    }

    @Override
    public CompletionStage<Optional<IdempotencyEntry>> lookup(LockKey key, Duration timeout) {
        return redis.multi(LOOKUP, key.value(), keys(key))
                .thenApply(r -> r.isEmpty() ? Optional.<IdempotencyEntry>empty() : Optional.of(entry(key, r)));
    }

    /** Nothing to do: entries expire at their retention by themselves. */
    @Override
    public CompletionStage<Integer> purge(int limit, Duration timeout) {
        return CompletableFuture.completedFuture(0);
    }

    private String[] keys(LockKey key) {
        return new String[] {RedisKeys.idempotencyKey(prefix, key)};
    }

    private static IdempotencyEntry entry(LockKey key, List<Object> r) {
        try {
            return new IdempotencyEntry(IdempotencyState.ofCode(((String) r.get(0)).charAt(0)), (String) r.get(1), (Long) r.get(2),
                    Instant.ofEpochMilli((Long) r.get(3)), Instant.ofEpochMilli((Long) r.get(4)),
                    Base64.getDecoder().decode((String) r.get(5)));
        } catch (RuntimeException e) {
            // Someone else's value at our key, or a half-written hash: say so rather than guess.
            throw new FenceGuardException(ErrorCode.INTERNAL, key.value(), "the idempotency entry at "
                    + "this key is not in fence-guard's format (" + e.getClass().getSimpleName() + ")");
        }
    }

    @Override
    public String toString() {
        return "RedisIdempotencyBackend[" + redis.topology() + ", prefix '" + prefix + "']";
    }
}
