package dev.fenceguard.redis;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.internal.Redacted;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.redis.internal.AsyncScriptRunner;
import dev.fenceguard.redis.internal.Connections;
import dev.fenceguard.redis.internal.RedisKeys;
import dev.fenceguard.redis.internal.Script;
import dev.fenceguard.redis.internal.ScriptRunner;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock backend on Redis through Lettuce: standalone, Sentinel (a {@link RedisClient} with a
 * Sentinel URI) or Cluster ({@link RedisClusterClient}).
 *
 * <pre>{@code
 * try (RedisLockBackend backend = RedisLockBackend.builder(RedisClient.create("redis://127.0.0.1")).build()) {
 *     LockClient locks = LockClient.of(backend);
 *     ...
 * }
 * }</pre>
 *
 * <p>Each operation is one Lua script (EVALSHA, EVAL on NOSCRIPT), atomic on the server, with every
 * key it touches in {@code KEYS}. A lock uses two keys with one hash tag, so one Cluster slot:
 * {@code <prefix>{<key>}:lock} (value {@code <lock id>:<fence>}, expiring by {@code PX}) and
 * {@code <prefix>{<key>}:fence} (the persistent counter). Expiry is the server's.
 *
 * <p>Redis forgets: a restart without persistence, a FLUSHALL, a failover to a replica that lagged.
 * The default {@link FenceStrategy#CLOCK_FLOORED} keeps fences rising anyway by flooring them with the
 * server's {@code TIME}, strictly above every earlier fence even when the loss and the next
 * acquisition fall in the same millisecond: the script waits on the server clock for up to one
 * 10 µs tick when a key has no counter (lost, or first use) or when its counter is ahead of the floor
 * (see the constant's Javadoc). {@link FenceStrategy#DENSE} is only safe where the counter cannot be lost.
 * Optionally, {@link Builder#withReplicaAcknowledgement} makes each acquisition wait for replicas.
 *
 * <p>Every call is asynchronous: it is sent with Lettuce's asynchronous commands (NOSCRIPT answered
 * by an EVAL chained on the same path) and returns at once; no thread waits for Redis. Its stage
 * completes on Lettuce's event loop, or fails with {@code TIMEOUT} once the call's {@code timeout}
 * has passed, whatever the server does (paused, unreachable, reconnecting). Redis cannot be told to
 * give up on a command, so a command may still run after that: a grant or an extension that answers
 * after its call timed out is released at once, since its caller was told TIMEOUT and will not use it.
 * Lettuce's own command timeout ({@code RedisURI} timeout), when shorter, also ends a call with
 * {@code TIMEOUT}.
 *
 * <p>Thread-safe. Closing the backend closes the connection it opened (not one you passed in).
 */
public final class RedisLockBackend implements LockBackend, AutoCloseable {

    private static final Script ACQUIRE_DENSE = acquireScript(FenceStrategy.DENSE);
    private static final Script ACQUIRE_FLOORED = acquireScript(FenceStrategy.CLOCK_FLOORED);
    private static final Script RELEASE = Script.load("release");
    private static final Script EXTEND = Script.load("extend");
    private static final Script LOOKUP = Script.load("lookup");

    private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

    private final Connections connections;
    private final AsyncScriptRunner async;
    private final Script acquire;
    private final String prefix;
    private final FenceStrategy strategy;
    private final int replicas;
    private final Duration replicaTimeout;

    private RedisLockBackend(Builder b) {
        this.connections = b.connect.get();
        this.async = new AsyncScriptRunner(connections.async());
        this.prefix = b.prefix;
        this.strategy = b.strategy;
        this.acquire = strategy == FenceStrategy.DENSE ? ACQUIRE_DENSE : ACQUIRE_FLOORED;
        this.replicas = b.replicas;
        this.replicaTimeout = b.replicaTimeout;
        if (replicas > 0 && connections.waitForReplicas() == null) {
            connections.close();
            throw new IllegalStateException("withReplicaAcknowledgement is not supported on Redis Cluster connections");
        }
    }

    /** A backend on a standalone or Sentinel {@link RedisClient}; the backend opens its own connection. */
    public static Builder builder(RedisClient client) {
        Objects.requireNonNull(client, "client");
        return new Builder(() -> Connections.of(client));
    }

    /** A backend on a {@link RedisClusterClient}; the backend opens its own connection. */
    public static Builder builder(RedisClusterClient client) {
        Objects.requireNonNull(client, "client");
        return new Builder(() -> Connections.of(client));
    }

    /** A backend on a connection you own (not closed by the backend). Its codec must be UTF-8 strings. */
    public static Builder builder(StatefulRedisConnection<String, String> connection) {
        Objects.requireNonNull(connection, "connection");
        return new Builder(() -> Connections.of(connection));
    }

    /** A backend on a Cluster connection you own (not closed by the backend). */
    public static Builder builder(StatefulRedisClusterConnection<String, String> connection) {
        Objects.requireNonNull(connection, "connection");
        return new Builder(() -> Connections.of(connection));
    }

    @Override
    public String name() {
        return "redis";
    }

    /** The fence strategy in use. */
    public FenceStrategy fenceStrategy() {
        return strategy;
    }

    /** The prefix of every key this backend writes (give it to {@link FencedRedis.Builder#withLockKeyPrefixes}). */
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
        String tag = RedisKeys.tag(prefix, key);
        CompletableFuture<Optional<Grant>> call = async.multi(acquire, key.value(), new String[] {tag + ":lock", tag + ":fence"},
                lockId.value(), Long.toString(ttl.toMillis())).thenCompose(r -> granted(key, lockId, ttl, r));
        return AsyncScriptRunner.bounded(call, timeout, key.value(), "acquire",
                late -> late.ifPresent(grant -> undo(key, lockId, timeout, "grant")));
    }

    private CompletableFuture<Optional<Grant>> granted(LockKey key, LockId lockId, Duration ttl, List<Object> r) {
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
        Optional<Grant> grant = Optional.of(new Grant((Long) r.get(1), Instant.ofEpochMilli((Long) r.get(2) + ttl.toMillis())));
        if (replicas == 0) {
            return CompletableFuture.completedFuture(grant);
        }
        return awaitReplicas(key, lockId).thenApply(acked -> grant);
    }

    /** WAIT for the replicas; if they do not all acknowledge, release the lock, then fail. */
    private CompletableFuture<Void> awaitReplicas(LockKey key, LockId lockId) {
        CompletableFuture<Long> waited;
        try {
            waited = connections.waitForReplicas().send(replicas, replicaTimeout.toMillis()).toCompletableFuture();
        } catch (RuntimeException e) {
            waited = CompletableFuture.failedFuture(e);
        }
        return waited.handle((acked, error) -> {
            FenceGuardException failure = error != null ? AsyncScriptRunner.map(error, key.value(), "WAIT")
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
        return AsyncScriptRunner.bounded(sendRelease(key, lockId), timeout, key.value(), "release", null);
    }

    private CompletableFuture<Boolean> sendRelease(LockKey key, LockId lockId) {
        return async.integer(RELEASE, key.value(), new String[] {RedisKeys.lockKey(prefix, key)}, lockId.value())
                .thenApply(n -> n == 1);
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        CompletableFuture<Optional<Instant>> call = async.integer(EXTEND, key.value(), new String[] {RedisKeys.lockKey(prefix, key)},
                lockId.value(), Long.toString(ttl.toMillis()))
                .thenApply(expiry -> expiry < 0 ? Optional.<Instant>empty() : Optional.of(Instant.ofEpochMilli(expiry)));
        return AsyncScriptRunner.bounded(call, timeout, key.value(), "extend",
                late -> late.ifPresent(expiry -> undo(key, lockId, timeout, "extension")));
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        CompletableFuture<Optional<LockInfo>> call = async.multi(LOOKUP, key.value(), new String[] {RedisKeys.lockKey(prefix, key)})
                .thenApply(r -> (Long) r.get(0) == 0 ? Optional.<LockInfo>empty()
                        : Optional.of(new LockInfo(key, FenceToken.of((Long) r.get(1)), Instant.ofEpochMilli((Long) r.get(2)))));
        return AsyncScriptRunner.bounded(call, timeout, key.value(), "lookup", null);
    }

    /**
     * A grant or extension answered after its call had timed out: the caller was told TIMEOUT and will
     * not use it, so free the lock now rather than leave it blocking the key for a TTL. (The client
     * cannot do this itself: a backend that gives up first never passes it the late answer.)
     */
    private void undo(LockKey key, LockId lockId, Duration timeout, String what) {
        AsyncScriptRunner.bounded(sendRelease(key, lockId), timeout, key.value(), "release", null).whenComplete((released, error) ->
                log.debug("lock '{}' (lock {}): late {} undone: {}", key, lockId.redacted(), what,
                        error == null ? (released ? "released" : "already gone") : Redacted.describe(error)));
    }

    /** Closes the connection if this backend opened it. */
    @Override
    public void close() {
        connections.close();
    }

    @Override
    public String toString() {
        return "RedisLockBackend[" + connections.topology() + ", prefix '" + prefix + "', " + strategy + "]";
    }

    private static Script acquireScript(FenceStrategy strategy) {
        // MAX_WAIT: a counter at most one millisecond ahead of the floor waits for it (see acquire.lua);
        // SPIN_LIMIT bounds that wait should the server clock stop or go back meanwhile.
        return Script.load("acquire", java.util.Map.of("FLOORED", strategy == FenceStrategy.CLOCK_FLOORED ? "true" : "false",
                "EPOCH_US", Long.toString(FenceStrategy.EPOCH_MILLIS * 1000),
                "US_PER_FENCE", Long.toString(FenceStrategy.MICROS_PER_FENCE),
                "MAX_WAIT", Long.toString(FenceStrategy.PER_MILLISECOND), "SPIN_LIMIT", "100000",
                "MAX_FENCE", Long.toString(FenceToken.MAX_VALUE)));
    }

    /** Options for a {@link RedisLockBackend}. Not thread-safe. */
    public static final class Builder {
        private final Supplier<Connections> connect;
        private String prefix = "fg:";
        private FenceStrategy strategy = FenceStrategy.CLOCK_FLOORED;
        private int replicas;
        private Duration replicaTimeout = Duration.ZERO;

        private Builder(Supplier<Connections> connect) {
            this.connect = connect;
        }

        /**
         * Prefix of every key the backend writes; default {@code fg:}. Not {@code fg:fence:}: that is
         * where {@link FencedRedis} keeps resource fences by default, and a resource's fence key could then
         * be a lock's key.
         *
         * @throws IllegalArgumentException if it contains a brace or NUL, is longer than 64 characters, or is
         *     {@code fg:fence:}
         */
        public Builder withKeyPrefix(String prefix) {
            if (RedisKeys.DEFAULT_FENCE_PREFIX.equals(prefix)) {
                throw new IllegalArgumentException("key prefix must not be '" + prefix + "', FencedRedis's default fence key "
                        + "prefix: a resource's fence key could then be a lock's key");
            }
            this.prefix = RedisKeys.requirePrefix(prefix);
            return this;
        }

        /** How fences are chosen; default {@link FenceStrategy#CLOCK_FLOORED}. */
        public Builder withFenceStrategy(FenceStrategy strategy) {
            this.strategy = Objects.requireNonNull(strategy, "strategy");
            return this;
        }

        /**
         * After each acquisition, {@code WAIT} for {@code replicas} replicas to acknowledge it, up to
         * {@code timeout}; if fewer do, the lock is released and acquisition fails with UNAVAILABLE.
         * Off by default. Standalone and Sentinel only. The WAIT counts against the acquire call's
         * timeout; Redis holds back the connection's other commands while it waits, so keep it short.
         *
         * @throws IllegalArgumentException if {@code replicas < 1} or the timeout is negative or sub-millisecond
         */
        public Builder withReplicaAcknowledgement(int replicas, Duration timeout) {
            if (replicas < 1) {
                throw new IllegalArgumentException("replicas must be at least 1, was " + replicas);
            }
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative() || timeout.getNano() % 1_000_000 != 0) {
                throw new IllegalArgumentException("replica timeout must be whole non-negative milliseconds, was " + timeout);
            }
            this.replicas = replicas;
            this.replicaTimeout = timeout;
            return this;
        }

        /**
         * Connects (if built from a client) and returns the backend.
         *
         * @throws FenceGuardException UNAVAILABLE if the server cannot be reached
         */
        public RedisLockBackend build() {
            try {
                return new RedisLockBackend(this);
            } catch (RedisException e) {
                throw ScriptRunner.map(e, null, "connect");
            }
        }
    }
}
