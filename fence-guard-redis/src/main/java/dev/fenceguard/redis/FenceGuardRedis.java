package dev.fenceguard.redis;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.internal.EntrySettings;
import dev.fenceguard.core.internal.Horizon;
import dev.fenceguard.redis.internal.RedisErrors;
import dev.fenceguard.redis.internal.RedisHandle;
import dev.fenceguard.redis.internal.RedisKeys;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * fence-guard on one Redis (standalone, Sentinel or Cluster): the one entry of this module. Built once
 * from a Lettuce client or connection with one set of settings, it hands out everything the module
 * offers, sharing its one connection: the {@linkplain #lockBackend() lock backend}, the
 * {@linkplain #idempotencyBackend() idempotency backend}, the {@linkplain #flightStore() flight store}
 * of {@code Singleflight}, and the {@linkplain #fencedWrites() fenced writes}.
 *
 * <pre>{@code
 * RedisClient client = RedisClient.create(redisUri);   // "redis://host:6379", or a Sentinel URI; or a RedisClusterClient
 * try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build()) {
 *     LockClient locks = LockClient.of(redis.lockBackend());
 *     FencedRedis writes = redis.fencedWrites();
 *     locks.withLock("sku-1", Duration.ofSeconds(10), Duration.ofSeconds(2), lease ->
 *             writes.set("stock:sku-1", lease.fence(), "41").orThrow());
 * }
 * }</pre>
 *
 * <p>Because everything comes from one place, the fenced writes know the key spaces of the lock
 * backend, the idempotency backend and the flight store, and refuse resource keys in them (a fenced
 * write there could rewind a lock's fence or take over a lock), with no prefix to repeat. Other lock
 * backends that share the database are named with {@link Builder#withOtherLockKeyPrefixes}.
 *
 * <p>Lock and resource may live on different servers (the resource need not be where the lock is):
 * build one {@code FenceGuardRedis} per server, and take the lock backend from one and the fenced
 * writes from the other.
 *
 * <p>Built from a connection rather than a client, it has no way to open the pub/sub connection on
 * which the flight store's waiters are woken, since a Lettuce connection does not expose its client:
 * {@link #flightStore()} then works as everywhere, except that waiters poll (see {@link RedisFlightStore}).
 *
 * <p>Thread-safe. Closing it closes the connections it opened (the one it opened from a client and the
 * flight store's pub/sub connection; never a connection you passed in); nothing it handed out may be
 * used afterwards.
 *
 * @since 0.1
 */
public final class FenceGuardRedis implements AutoCloseable {

    private final RedisHandle redis;
    private final RedisLockBackend lockBackend;
    private final RedisIdempotencyBackend idempotencyBackend;
    private final RedisFlightStore flightStore;
    private final Map<FencePolicy, FencedRedis> fencedWrites;

    private FenceGuardRedis(Builder b, RedisHandle redis) {
        this.redis = redis;
        this.lockBackend = new RedisLockBackend(redis, b.keyPrefix, b.strategy, b.clockMargin, b.replicas, b.replicaTimeout);
        this.idempotencyBackend = new RedisIdempotencyBackend(redis, b.keyPrefix);
        this.flightStore = new RedisFlightStore(redis, b.connectPubSub, b.flightPrefix);
        List<String> refused = new ArrayList<>();
        refused.add(b.keyPrefix);
        refused.addAll(b.otherLockPrefixes);
        AsyncFencedRedis.Space space = new AsyncFencedRedis.Space(b.fencePrefix, b.fenceField, refused, b.flightPrefix,
                b.settings.callTimeout(), b.horizon == null ? Optional.empty() : Optional.of(new Horizon(b.horizon, b.clockMargin)));
        // Lua compares fences as numbers, so Redis always stores the integer form.
        this.fencedWrites = b.settings.perPolicy(FenceEncoding.INTEGER, "redis",
                rule -> new FencedRedis(new AsyncFencedRedis(redis, space, rule)));
    }

    /**
     * On a standalone or Sentinel {@link RedisClient}: {@link Builder#build()} opens one connection, the
     * flight store's first wait opens one pub/sub connection, and {@link #close()} closes both.
     *
     * @throws NullPointerException if {@code client} is null
     */
    public static Builder builder(RedisClient client) {
        Objects.requireNonNull(client, "client");
        return new Builder(() -> RedisHandle.of(client), client::connectPubSub, false);
    }

    /**
     * On a {@link RedisClusterClient}: {@link Builder#build()} opens one connection, the flight store's
     * first wait opens one pub/sub connection, and {@link #close()} closes both.
     *
     * @throws NullPointerException if {@code client} is null
     */
    public static Builder builder(RedisClusterClient client) {
        Objects.requireNonNull(client, "client");
        return new Builder(() -> RedisHandle.of(client), client::connectPubSub, true);
    }

    /**
     * On a connection you own, which fence-guard never closes. Its codec must be UTF-8 strings.
     * If your own threads write to it while fence-guard does, a fence-guard call can park briefly on the
     * lock Lettuce takes for each write (docs/redis.md, "Lettuce's write lock"); a connection of
     * fence-guard's own rules that out. The flight store's waiters poll (see the class comment).
     *
     * @throws NullPointerException if {@code connection} is null
     */
    public static Builder builder(StatefulRedisConnection<String, String> connection) {
        Objects.requireNonNull(connection, "connection");
        return new Builder(() -> RedisHandle.of(connection), null, false);
    }

    /**
     * On a Cluster connection you own, which fence-guard never closes. Its codec must be UTF-8 strings.
     * If your own threads write to it while fence-guard does, a fence-guard call can park briefly on the
     * lock Lettuce takes for each write (docs/redis.md, "Lettuce's write lock"); a connection of
     * fence-guard's own rules that out. The flight store's waiters poll (see the class comment).
     *
     * @throws NullPointerException if {@code connection} is null
     */
    public static Builder builder(StatefulRedisClusterConnection<String, String> connection) {
        Objects.requireNonNull(connection, "connection");
        return new Builder(() -> RedisHandle.of(connection), null, true);
    }

    /** The lock backend: wrap it in a {@link dev.fenceguard.core.LockClient}. */
    public RedisLockBackend lockBackend() {
        return lockBackend;
    }

    /**
     * The idempotency backend: wrap it in a {@link dev.fenceguard.core.idempotency.IdempotencyStore}. Its
     * entries live under the same key prefix as the locks, each in the slot of the lock of the same name.
     *
     * @since 0.1
     */
    public RedisIdempotencyBackend idempotencyBackend() {
        return idempotencyBackend;
    }

    /**
     * The flight store of {@link dev.fenceguard.core.singleflight.Singleflight}: flights live under
     * {@link Builder#withFlightKeyPrefix the flight key prefix}; waiters are woken over pub/sub when this
     * entry was built from a client, and poll when it was built from a connection (see {@link RedisFlightStore}).
     *
     * @since 0.1
     */
    public RedisFlightStore flightStore() {
        return flightStore;
    }

    /** The fenced writes under {@link FencePolicy#SAME_OR_NEWER}: a holder may write many times under one lease. */
    public FencedRedis fencedWrites() {
        return fencedWrites(FencePolicy.SAME_OR_NEWER);
    }

    /**
     * The fenced writes under {@code policy}, e.g. {@link FencePolicy#STRICTLY_NEWER} for writes that
     * must happen once per lease. Writers of both policies share the connection and every setting.
     *
     * @throws NullPointerException if {@code policy} is null
     */
    public FencedRedis fencedWrites(FencePolicy policy) {
        return fencedWrites.get(Objects.requireNonNull(policy, "policy"));
    }

    /** Closes the flight store's pub/sub connection, and the connection if it was opened from a client. */
    @Override
    public void close() {
        flightStore.close();
        redis.close();
    }

    @Override
    public String toString() {
        return "FenceGuardRedis[" + redis.topology() + ", key prefix '" + lockBackend.keyPrefix() + "', "
                + lockBackend.fenceStrategy() + "]";
    }

    /** Settings of a {@link FenceGuardRedis}. Not thread-safe; {@link #build()} copies them. */
    public static final class Builder {
        private final Supplier<RedisHandle> connect;
        /** Null when built from a connection. */
        private final Supplier<StatefulRedisPubSubConnection<String, String>> connectPubSub;
        private final boolean cluster;
        private final EntrySettings settings = new EntrySettings();
        private String keyPrefix = RedisKeys.DEFAULT_LOCK_PREFIX;
        private FenceStrategy strategy = FenceStrategy.CLOCK_FLOORED;
        private int replicas;
        private Duration replicaTimeout = Duration.ZERO;
        private String fencePrefix = RedisKeys.DEFAULT_FENCE_PREFIX;
        private String flightPrefix = RedisKeys.DEFAULT_FLIGHT_PREFIX;
        private String fenceField = "_fence";
        private List<String> otherLockPrefixes = List.of();
        private Duration horizon;
        private Duration clockMargin = Horizon.DEFAULT_MARGIN;

        private Builder(Supplier<RedisHandle> connect, Supplier<StatefulRedisPubSubConnection<String, String>> connectPubSub,
                boolean cluster) {
            this.connect = connect;
            this.connectPubSub = connectPubSub;
            this.cluster = cluster;
        }

        /**
         * Prefix of every key the lock backend writes; default {@code fg:}. It must differ from the fence
         * key prefix ({@link #build()} checks).
         *
         * @throws IllegalArgumentException if it is null, contains a brace, NUL or an unpaired surrogate, or is longer than 64 characters
         */
        public Builder withKeyPrefix(String prefix) {
            this.keyPrefix = RedisKeys.requirePrefix(prefix);
            return this;
        }

        /**
         * How the lock backend chooses fences; default {@link FenceStrategy#CLOCK_FLOORED}.
         *
         * @throws NullPointerException if {@code strategy} is null
         */
        public Builder withFenceStrategy(FenceStrategy strategy) {
            this.strategy = Objects.requireNonNull(strategy, "strategy");
            return this;
        }

        /**
         * After each acquisition, {@code WAIT} for {@code replicas} replicas to acknowledge it, up to
         * {@code timeout}; if fewer do, the lock is released and acquisition fails with UNAVAILABLE.
         * Off by default. Standalone and Sentinel only ({@link #build()} refuses it on a Cluster). The
         * WAIT counts against the acquire call's timeout; Redis holds back the connection's other
         * commands while it waits, fenced writes included, so keep it short.
         *
         * @throws IllegalArgumentException if {@code replicas < 1} or the timeout is negative or sub-millisecond
         * @throws NullPointerException if {@code timeout} is null
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
         * Prefix of the companion keys holding the fences of guarded keys; default {@code fg:fence:}. It
         * must differ from every lock key prefix ({@link #build()} checks).
         *
         * @throws IllegalArgumentException if it is null, contains a brace, NUL or an unpaired surrogate, or is longer than 64 characters
         */
        public Builder withFenceKeyPrefix(String prefix) {
            this.fencePrefix = RedisKeys.requirePrefix(prefix);
            return this;
        }

        /**
         * Prefix of the flight store's keys and pub/sub channel; default {@code fg-sf:}. It must differ
         * from every lock key prefix and from the fence key prefix ({@link #build()} checks); the fenced
         * writes refuse keys under it.
         *
         * @throws IllegalArgumentException if it is null, contains a brace, NUL or an unpaired surrogate, or is longer than 64 characters
         * @since 0.1
         */
        public Builder withFlightKeyPrefix(String prefix) {
            this.flightPrefix = RedisKeys.requirePrefix(prefix);
            return this;
        }

        /**
         * The hash field that holds a guarded hash's fence; default {@code _fence}.
         *
         * @throws IllegalArgumentException if empty
         * @throws NullPointerException if {@code field} is null
         */
        public Builder withFenceField(String field) {
            Objects.requireNonNull(field, "field");
            if (field.isEmpty()) {
                throw new IllegalArgumentException("fence field must not be empty");
            }
            this.fenceField = field;
            return this;
        }

        /**
         * Key prefixes of <em>other</em> lock backends whose locks live in the same Redis database (built
         * by other {@code FenceGuardRedis} instances); none by default. The fenced writes refuse resource
         * keys starting with <code>&lt;prefix&gt;{</code> for each, as they always do for this instance's
         * own {@link #withKeyPrefix key prefix}. Replaces the previous list.
         *
         * @throws IllegalArgumentException if a prefix is null, contains a brace, NUL or an unpaired surrogate, or is longer than
         *     64 characters
         * @throws NullPointerException if {@code prefixes} is null
         */
        public Builder withOtherLockKeyPrefixes(String... prefixes) {
            this.otherLockPrefixes = EntrySettings.each("prefixes", prefixes, RedisKeys::requirePrefix);
            return this;
        }

        /**
         * Holds the fenced writes to a horizon ({@code docs/fence-lifecycle.md}), so that their tombstones
         * can expire with no bound on how long a writer may pause. A write that finds no fence recorded for
         * its key (a set, hset, claim, delete or {@link FencedRedis#eval} of a key that has none) is applied
         * only if its fence is above {@code tick(TIME - horizon)}, the clock floor of the server's clock
         * {@code horizon} ago, read inside the write's script; otherwise it is
         * {@link dev.fenceguard.core.WriteOutcome.Stale} with reason {@code BELOW_HORIZON} and the horizon as
         * its current fence. Writes that find a fence are judged by the write rule alone. In exchange, every
         * tombstone (the fence key of a deleted key or of a key claimed while absent, a hash holding only its
         * fence field) expires at the first millisecond whose clock tick exceeds its fence, plus
         * {@code horizon} and the {@linkplain #withClockMargin clock margin}: Redis's expiry is the purge, and
         * there is no purge job. A write that makes the key live again removes the expiry.
         *
         * <p>The price: a lease whose fence is older than {@code horizon} can no longer create a key. Pick a
         * horizon well above your longest lease hold (renewals included) plus the skew between the lock's
         * clock and this server's; days are cheap. Fences must come from a
         * {@link FenceStrategy#CLOCK_FLOORED} lock: {@code DENSE} fences are below any horizon, so
         * {@link #build()} refuses a horizon with a {@code DENSE} strategy (for a lock on another server, it
         * cannot check: do not). Every writer of a key must use the same horizon: a writer without one
         * neither checks the rule nor expires what it leaves. Under a {@code volatile-*}
         * {@code maxmemory-policy}, Redis may evict tombstones with an expiry before their time (see
         * docs/redis.md). Writes that may create a fence record read {@code TIME} once more.
         *
         * @param horizon the horizon age, at least 1 second
         * @throws NullPointerException if {@code horizon} is null
         * @throws IllegalArgumentException if {@code horizon} is shorter than 1 second or longer than 3650 days
         * @since 0.1
         */
        public Builder withHorizon(Duration horizon) {
            this.horizon = Horizon.checkAge(horizon);
            return this;
        }

        /**
         * How far this server's clock may step back between a fence record's expiry and a later use of its
         * key ({@code docs/fence-lifecycle.md}); default 5 minutes. It applies to two kinds of records:
         * a free {@link FenceStrategy#CLOCK_FLOORED} lock's fence counter expires this long after its fence's
         * clock tick (or after the lease's end, if later; see {@link RedisLockBackend}), with or without a
         * horizon; and with {@link #withHorizon a horizon}, a tombstone expires this long after the horizon
         * has passed its fence. Larger is safer against clock steps (a restored VM snapshot, a failover
         * between servers whose clocks differ) and keeps idle records longer.
         *
         * @param clockMargin zero or more, at most 1 day
         * @throws NullPointerException if {@code clockMargin} is null
         * @throws IllegalArgumentException if it is negative or longer than 1 day
         * @since 0.1
         */
        public Builder withClockMargin(Duration clockMargin) {
            this.clockMargin = Horizon.checkMargin(clockMargin);
            return this;
        }

        /**
         * How long one call may wait for its answer: one fenced write (and {@link FencedRedis#warmUp()}
         * as a whole); default 10 s. A write still unanswered then ends with {@code TIMEOUT} (it may still
         * run later). The calls of the lock backend, the idempotency backend and the flight store are
         * bounded by the timeouts their {@link dev.fenceguard.core.LockClient}, {@code IdempotencyStore}
         * or {@code Singleflight} passes instead.
         *
         * @throws IllegalArgumentException if it is below 1 ms or above 10 minutes
         * @throws NullPointerException if {@code timeout} is null
         * @since 0.1
         */
        public Builder withCallTimeout(Duration timeout) {
            settings.callTimeout(timeout);
            return this;
        }

        /**
         * Where stale-write rejections are counted; default {@link LockMetrics#automatic()}.
         *
         * @throws NullPointerException if {@code metrics} is null
         */
        public Builder withMetrics(LockMetrics metrics) {
            settings.metrics(metrics);
            return this;
        }

        /**
         * Where each fenced write is observed: one {@code fenceguard.write} observation per write of
         * {@link #build() the built} {@link FencedRedis} (both faces, both policies), with {@code backend}
         * {@code redis}, {@code resource.type} {@code string} ({@code set}), {@code hash} ({@code hset}),
         * {@code key} ({@code delete}, {@code claim}) or {@code script} ({@code eval}), the {@code operation}
         * and the {@code outcome}. Pass the object given to
         * {@link dev.fenceguard.core.LockClient.Builder#withObservations}, so that a write made in the work
         * of a blocking {@code withLock} (on its thread) is a child of that {@code withLock}. Default
         * {@link LockObservations#none()}: nothing observed, nothing spent. The lock backend is observed by
         * its {@code LockClient}, not here.
         *
         * @throws NullPointerException if {@code observations} is null
         * @since 0.1
         */
        public Builder withObservations(LockObservations observations) {
            settings.observations(observations);
            return this;
        }

        /**
         * Checks the settings, then connects (if built from a client).
         *
         * @throws IllegalArgumentException if the fence key prefix equals the key prefix or one of the other
         *     lock key prefixes (a resource's fence key could then be a lock's key), or the flight key prefix
         *     equals any of those (checked before connecting)
         * @throws IllegalStateException if replica acknowledgement is asked of a Cluster (before connecting)
         * @throws IllegalArgumentException if a horizon is set with the {@link FenceStrategy#DENSE} strategy,
         *     whose fences are all below it (before connecting)
         * @throws FenceGuardException UNAVAILABLE or AUTH if the server cannot be reached or refuses the client
         */
        public FenceGuardRedis build() {
            Set<String> lockPrefixes = new LinkedHashSet<>();
            lockPrefixes.add(keyPrefix);
            lockPrefixes.addAll(otherLockPrefixes);
            if (lockPrefixes.contains(fencePrefix)) {
                throw new IllegalArgumentException("fence key prefix '" + fencePrefix + "' must differ from every lock key prefix "
                        + lockPrefixes + ": a resource's fence key could then be a lock's key or fence counter");
            }
            if (lockPrefixes.contains(flightPrefix) || flightPrefix.equals(fencePrefix)) {
                throw new IllegalArgumentException("flight key prefix '" + flightPrefix + "' must differ from the fence key prefix '"
                        + fencePrefix + "' and from every lock key prefix " + lockPrefixes
                        + ": a flight's keys could then be a lock's keys or a resource's fence key");
            }
            if (horizon != null && strategy == FenceStrategy.DENSE) {
                throw new IllegalArgumentException("withHorizon needs FenceStrategy.CLOCK_FLOORED fences: DENSE fences (1, 2, 3, ...) "
                        + "are all below the horizon, so every write that creates a key would be refused (docs/fence-lifecycle.md)");
            }
            if (replicas > 0 && cluster) {
                throw new IllegalStateException("withReplicaAcknowledgement is not supported on Redis Cluster, where WAIT "
                        + "cannot be routed to the node that took the lock");
            }
            RedisHandle redis;
            try {
                redis = connect.get();
            } catch (RedisException e) {
                throw RedisErrors.map(e, null, "connect");
            }
            return new FenceGuardRedis(this, redis);
        }
    }
}
