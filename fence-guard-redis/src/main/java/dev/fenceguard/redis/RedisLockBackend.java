package dev.fenceguard.redis;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.core.internal.Redacted;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.redis.internal.RedisErrors;
import dev.fenceguard.redis.internal.RedisHandle;
import dev.fenceguard.redis.internal.RedisKeys;
import dev.fenceguard.redis.internal.Script;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A lock backend on Redis through Lettuce: standalone, Sentinel or Cluster. Get it from
 * {@link FenceGuardRedis#lockBackend()}, which owns the connection and the settings:
 *
 * <pre>{@code
 * try (FenceGuardRedis redis = FenceGuardRedis.builder(redisClient).build()) {
 *     LockClient locks = LockClient.of(redis.lockBackend());
 *     try (Lease lease = locks.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow()) {
 *         orders.ship(42L, lease.fence());               // your work; its fenced writes carry lease.fence()
 *     }
 * }
 * }</pre>
 *
 * <p>Each operation is one Lua script (EVALSHA, EVAL on NOSCRIPT), atomic on the server, with every
 * key it touches in {@code KEYS}. A lock uses two keys with one hash tag, so one Cluster slot:
 * {@code <prefix>{<key>}:lock} (value {@code <lock id>:<fence>:<expiry ms>}, expiring at that server
 * instant by {@code PXAT}) and {@code <prefix>{<key>}:fence} (the fence counter). Expiry is the
 * server's. An acquire and a release take seven Redis commands together, the two {@code EVALSHA}s
 * included: {@code TIME}, {@code SET NX PXAT} and {@code SET .. GET PXAT} on the counter; {@code GETDEL}
 * and {@code PEXPIREAT} on the counter ({@link FenceStrategy#DENSE}: six, without the {@code PEXPIREAT}).
 *
 * <p>A {@link FenceStrategy#CLOCK_FLOORED} counter does not stay forever (docs/fence-lifecycle.md): it
 * expires a {@linkplain FenceGuardRedis.Builder#withClockMargin clock margin} after the later of the
 * lease's end and its fence's clock tick; a release brings that forward to the margin after the fence's
 * tick. The next acquisition of the key then takes a fence from the clock tick after it starts, which
 * is above every fence issued before unless the server clock went back by more than the margin. So an
 * idle key costs nothing after the margin, released or not. A {@link FenceStrategy#DENSE} counter never
 * expires: without it the count would start again at 1.
 *
 * <p>Redis forgets: a restart without persistence, a FLUSHALL, a failover to a replica that lagged.
 * The default {@link FenceStrategy#CLOCK_FLOORED} keeps fences rising anyway by flooring them with the
 * server's {@code TIME}, strictly above every earlier fence even when the loss and the next
 * acquisition fall in the same millisecond: the script waits on the server clock for up to one
 * 10 µs tick when a key has no counter (lost, or first use) or when its counter is ahead of the floor
 * (see the constant's Javadoc). {@link FenceStrategy#DENSE} is only safe where the counter cannot be lost.
 * Optionally, {@link FenceGuardRedis.Builder#withReplicaAcknowledgement} makes each acquisition wait for replicas.
 *
 * <p>Every call is asynchronous: it is sent with Lettuce's asynchronous commands (NOSCRIPT answered
 * by an EVAL chained on the same path) and returns at once; no thread waits for Redis. Its stage
 * completes on Lettuce's event loop with what the server answered. Redis has no per-command deadline
 * to hand the call's {@code timeout} to (a script runs atomically, in microseconds, once it starts), and
 * this backend starts no timer of its own: the lock client ends the caller's wait at the timeout with
 * {@code TIMEOUT} and releases a grant or an extension that answers after it (see {@link LockBackend}).
 * A command sent to a server that stopped answering stays queued in Lettuce, holding no thread, until
 * Redis answers or Lettuce's own command timeout ({@code RedisURI} timeout) ends it.
 *
 * <p>Thread-safe. It has no lifecycle of its own: closing the {@link FenceGuardRedis} it came from
 * closes the connection.
 *
 * @since 0.1
 */
public final class RedisLockBackend implements LockBackend {

    /**
     * How long a release that finds another holder's lock taken by a build before 0.3 (whose value does
     * not record its expiry) keeps it: longer rather than shorter than its lease, so that the lock stays
     * exclusive; its holder's own release or extension still applies. Only a rolling upgrade meets it.
     */
    static final long LEGACY_RESTORE_MILLIS = 600_000;

    private static final Script LOOKUP = Script.load("lookup");
    private static final String DIGITS = Script.load("digits").source();

    private final RedisHandle redis;
    private final Script acquire;
    private final Script release;
    private final Script extend;
    private final String prefix;
    private final FenceStrategy strategy;
    private final int replicas;
    private final Duration replicaTimeout;

    /**
     * Built by {@link FenceGuardRedis}, which has checked the settings (replicas only where WAIT can be sent);
     * {@code clockMargin} is how long a free clock-floored counter outlives its fence's tick.
     */
    RedisLockBackend(RedisHandle redis, String prefix, FenceStrategy strategy, Duration clockMargin, int replicas,
            Duration replicaTimeout) {
        this.redis = redis;
        this.prefix = prefix;
        this.strategy = strategy;
        Map<String, String> values = scriptValues(strategy, clockMargin);
        this.acquire = Script.load("acquire", values);
        this.release = Script.load("release", values);
        this.extend = Script.load("extend", values);
        this.replicas = replicas;
        this.replicaTimeout = replicaTimeout;
    }

    @Override
    public String name() {
        return "redis";
    }

    /** The fence strategy in use. */
    public FenceStrategy fenceStrategy() {
        return strategy;
    }

    /**
     * The prefix of every key this backend writes ({@link FenceGuardRedis.Builder#withKeyPrefix}); the
     * fenced writes of the same {@link FenceGuardRedis} refuse resource keys in its namespace.
     */
    public String keyPrefix() {
        return prefix;
    }

    /** The Redis key holding the lock on {@code key} (for operators; see the class comment). */
    public String lockKeyOf(String key) {
        return RedisKeys.lockKey(prefix, LockKey.of(key));
    }

    /** The Redis key holding the fence counter of {@code key}. */
    public String fenceKeyOf(String key) {
        return RedisKeys.fenceKey(prefix, LockKey.of(key));
    }

    @Override
    public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return acquire(acquire, key, key.value(), twoKeys(key), lockId, ttl);
    }

    // Each call below runs through a method the warm-up runs too, with the internal key of warm-ups:
    // a lambda or string concatenation is linked on the first run of its line, so only the very lines
    // a real call runs take that cost away from it.

    /** The lock key and the fence counter key of {@code key}: the KEYS of the acquire, extend and release scripts. */
    private String[] twoKeys(LockKey key) {
        // Each key in one concatenation (the tag is not made on its own): the keys of RedisKeys.lockKey and fenceKey.
        String escaped = RedisKeys.escape(key.value());
        return new String[] {prefix + "{" + escaped + "}:lock", prefix + "{" + escaped + "}:fence"};
    }

    /** {@code subject} names the key in errors (null for the warm-up), {@code key} the lock WAIT gives back. */
    private CompletableFuture<Optional<Grant>> acquire(Script script, LockKey key, String subject, String[] keys, LockId lockId,
            Duration ttl) {
        return redis.multi(script, subject, keys, lockId.value(), Long.toString(ttl.toMillis()))
                .thenCompose(r -> granted(key, lockId, r));
    }

    private CompletableFuture<Optional<Grant>> granted(LockKey key, LockId lockId, List<Object> r) {
        long status = (Long) r.get(0);
        if (status == -1) {
            return CompletableFuture.failedFuture(new FenceGuardException(ErrorCode.FENCE_EXHAUSTED, key.value(),
                    "the key has issued its last fence " + r.get(1) + "; no lock was taken"));
        }
        if (status == -2) {
            return CompletableFuture.failedFuture(new FenceGuardException(ErrorCode.UNAVAILABLE, key.value(), "the Redis server "
                    + "clock did not advance while the clock-floored fence waited for it (did the clock go back?); no lock was taken"));
        }
        if (status == 0) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        Optional<Grant> grant = Optional.of(new Grant((Long) r.get(1), Instant.ofEpochMilli((Long) r.get(2))));
        if (replicas == 0) {
            return CompletableFuture.completedFuture(grant);
        }
        return awaitReplicas(key, lockId).thenApply(acked -> grant);
    }

    /** WAIT for the replicas; if they do not all acknowledge, release the lock, then fail. */
    private CompletableFuture<Void> awaitReplicas(LockKey key, LockId lockId) {
        return redis.waitForReplicas(replicas, replicaTimeout.toMillis()).handle((acked, error) -> {
            FenceGuardException failure = error != null ? RedisErrors.map(error, key.value(), "WAIT")
                    : acked < replicas ? new FenceGuardException(ErrorCode.UNAVAILABLE, key.value(), "only " + acked + " of "
                            + replicas + " replicas acknowledged the acquisition within " + replicaTimeout + "; the lock was released")
                    : null;
            if (failure == null) {
                return CompletableFuture.<Void>completedFuture(null);
            }
            // The failure is what the caller needs to hear; a failed release leaves the lock to its TTL.
            return sendRelease(key, lockId).handle((released, ignored) -> {
                throw failure;
            }).<Void>thenApply(x -> null);
        }).thenCompose(f -> f);
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
        return sendRelease(key.value(), twoKeys(key), lockId);
    }

    private CompletableFuture<Boolean> sendRelease(LockKey key, LockId lockId) {
        return sendRelease(key.value(), twoKeys(key), lockId);
    }

    private CompletableFuture<Boolean> sendRelease(String subject, String[] keys, LockId lockId) {
        return redis.integer(release, subject, keys, lockId.value()).thenApply(n -> n == 1);
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return extend(key.value(), twoKeys(key), lockId, ttl);
    }

    private CompletableFuture<Optional<Instant>> extend(String subject, String[] keys, LockId lockId, Duration ttl) {
        return redis.integer(extend, subject, keys, lockId.value(),
                Long.toString(ttl.toMillis()))
                .thenApply(expiry -> expiry < 0 ? Optional.<Instant>empty() : Optional.of(Instant.ofEpochMilli(expiry)));
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        return lookup(key, key.value(), RedisKeys.lockKey(prefix, key));
    }

    private CompletableFuture<Optional<LockInfo>> lookup(LockKey key, String subject, String lockKey) {
        return redis.multi(LOOKUP, subject, new String[] {lockKey})
                .thenApply(r -> (Long) r.get(0) == 0 ? Optional.<LockInfo>empty()
                        : Optional.of(new LockInfo(key, FenceToken.of((Long) r.get(1)), Instant.ofEpochMilli((Long) r.get(2)))));
    }

    /**
     * Gets ready for the first calls: {@code SCRIPT LOAD} of the acquire, release, extend and lookup
     * scripts (so no first call pays a NOSCRIPT and a full EVAL), then, on the internal key
     * <code>&lt;prefix&gt;{}:warm-up</code>, which no lock key can name (lock keys are 1 to 512 bytes, so
     * their hash tags are never empty) and nothing ever writes, each call's own code: an acquisition
     * that sends the lookup script in place of the acquire script (a read that finds nothing), then an
     * extension, a release and a lookup, which find nothing to extend, release or report. It takes no
     * lock and writes no key.
     *
     * @since 0.1
     */
    @Override
    public CompletionStage<Void> warmUp(Duration timeout) {
        String reserved = RedisKeys.namespace(prefix) + "}:warm-up";
        twoKeys(WARM_UP_KEY); // computed only, as an acquisition computes them
        String[] reservedKeys = {reserved, reserved};
        LockId nobody = LockId.random();
        Duration ttl = Duration.ofSeconds(1);
        return redis.load(null, acquire, release, extend, LOOKUP)
                // The acquisition's path with the lookup script in place of the acquire script, which would
                // write: it reads the reserved key, finds nothing and answers {0}, which reads as "held".
                .thenCompose(loaded -> acquire(LOOKUP, WARM_UP_KEY, null, reservedKeys, nobody, ttl))
                .thenCompose(held -> extend(null, reservedKeys, nobody, ttl))
                .thenCompose(extended -> sendRelease(null, reservedKeys, nobody))
                .thenCompose(released -> lookup(WARM_UP_KEY, null, reserved))
                .thenApply(found -> null);
    }

    /**
     * Stands for the reserved key in the warm-up's calls where the code needs a LockKey (to compute
     * keys); no command is sent for it.
     */
    private static final LockKey WARM_UP_KEY = LockKey.of("warm-up");

    @Override
    public String toString() {
        return "RedisLockBackend[" + redis.topology() + ", prefix '" + prefix + "', " + strategy + "]";
    }

    /** What the acquire, release and extend scripts are filled in with: one variant per strategy and margin. */
    private static Map<String, String> scriptValues(FenceStrategy strategy, Duration clockMargin) {
        // MAX_WAIT: a counter at most one millisecond ahead of the floor waits for it (see acquire.lua);
        // SPIN_LIMIT bounds that wait should the server clock stop or go back meanwhile. MARGIN_MS is rounded
        // up: a counter may outlive the rule, never expire before it.
        long marginMillis = Math.ceilDiv(clockMargin.toNanos(), 1_000_000L);
        // DIGITS: the number printer the scripts share (digits.lua).
        return Map.ofEntries(Map.entry("FLOORED", strategy == FenceStrategy.CLOCK_FLOORED ? "true" : "false"),
                Map.entry("EPOCH_US", Long.toString(ClockFloor.EPOCH_MILLIS * 1000)),
                Map.entry("EPOCH_MS", Long.toString(ClockFloor.EPOCH_MILLIS)),
                Map.entry("PER_MS", Long.toString(ClockFloor.PER_MILLISECOND)),
                Map.entry("US_PER_FENCE", Long.toString(ClockFloor.MICROS_PER_FENCE)),
                Map.entry("MAX_WAIT", Long.toString(ClockFloor.PER_MILLISECOND)), Map.entry("SPIN_LIMIT", "100000"),
                Map.entry("MAX_FENCE", Long.toString(FenceToken.MAX_VALUE)),
                Map.entry("MARGIN_MS", Long.toString(marginMillis)),
                Map.entry("LEGACY_RESTORE_MS", Long.toString(LEGACY_RESTORE_MILLIS)),
                Map.entry("DIGITS", DIGITS));
    }
}
