package dev.fenceguard.redis;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.redis.internal.Connections;
import dev.fenceguard.redis.internal.RedisKeys;
import dev.fenceguard.redis.internal.Script;
import dev.fenceguard.redis.internal.ScriptRunner;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Fenced writes to Redis: each one Lua script that checks the presented fence against the stored one
 * and, only if the {@link FencePolicy} admits it, writes the data and the new fence together.
 *
 * <pre>{@code
 * try (FencedRedis redis = FencedRedis.builder(client).build()) {
 *     redis.set("stock:sku-1", "41", lease.fence()).orThrow();
 * }
 * }</pre>
 *
 * <p>Where fences live:
 * <ul>
 *   <li>strings ({@link #set}): in a companion key {@code fg:fence:{<tag>}:<key>} whose hash tag is
 *       chosen to fall in the same Cluster slot as {@code key} ({@link #fenceKeyOf(String)});</li>
 *   <li>hashes ({@link #hset}): in a field of the hash itself, {@code _fence} by default.</li>
 * </ul>
 * A key is guarded either as a string or as a hash, not both. {@link #delete} keeps a tombstone: a
 * string's fence key stays, a hash keeps only its fence field, so a zombie cannot write it back.
 *
 * <p>Thread-safe. Closing closes the connection it opened (not one you passed in).
 */
public final class FencedRedis implements AutoCloseable {

    private static final Script SET = Script.load("fenced_set");
    private static final Script HSET = Script.load("fenced_hset");
    private static final Script DEL = Script.load("fenced_del");
    private static final String PRELUDE = resource("fenced_eval_prelude.lua");
    private static final String EPILOGUE = resource("fenced_eval_epilogue.lua");

    private final Connections connections;
    private final ScriptRunner scripts;
    private final FencePolicy policy;
    private final String fenceField;
    private final String fencePrefix;
    private final LockMetrics metrics;
    private final Map<String, Script> userScripts = new ConcurrentHashMap<>();

    private FencedRedis(Builder b) {
        this.connections = b.connect.get();
        this.scripts = new ScriptRunner(connections.commands());
        this.policy = b.policy;
        this.fenceField = b.fenceField;
        this.fencePrefix = b.fencePrefix;
        this.metrics = b.metrics != null ? b.metrics : LockMetrics.automatic();
    }

    /** Fenced writes on a standalone or Sentinel {@link RedisClient}. */
    public static Builder builder(RedisClient client) {
        Objects.requireNonNull(client, "client");
        return new Builder(() -> Connections.of(client));
    }

    /** Fenced writes on a {@link RedisClusterClient}. */
    public static Builder builder(RedisClusterClient client) {
        Objects.requireNonNull(client, "client");
        return new Builder(() -> Connections.of(client));
    }

    /** Fenced writes on a connection you own (UTF-8 string codec). */
    public static Builder builder(StatefulRedisConnection<String, String> connection) {
        Objects.requireNonNull(connection, "connection");
        return new Builder(() -> Connections.of(connection));
    }

    /** Fenced writes on a Cluster connection you own (UTF-8 string codec). */
    public static Builder builder(StatefulRedisClusterConnection<String, String> connection) {
        Objects.requireNonNull(connection, "connection");
        return new Builder(() -> Connections.of(connection));
    }

    /** The key that holds the fence of string key {@code key}: same Cluster slot as {@code key}. */
    public String fenceKeyOf(String key) {
        return RedisKeys.resourceFenceKey(fencePrefix, checkKey(key));
    }

    /**
     * {@code SET key value} if the policy admits {@code fence} over the key's stored fence.
     *
     * @return {@code Applied} or {@code Stale(stored)}; a key never fenced has fence 0
     * @throws IllegalArgumentException if the key is empty or not valid Unicode (before any I/O)
     */
    public WriteOutcome set(String key, String value, FenceToken fence) {
        checkKey(key);
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(fence, "fence");
        long r = scripts.integer(SET, key, new String[] {key, RedisKeys.resourceFenceKey(fencePrefix, key)}, value,
                Long.toString(fence.value()), strictFlag());
        return r > 0 ? new WriteOutcome.Applied(key, fence.value()) : stale(key, fence, -r);
    }

    /**
     * {@code HSET key field value ...} plus the fence field, if the policy admits {@code fence} over the
     * hash's stored fence field.
     *
     * @throws IllegalArgumentException if {@code fields} is empty or names the fence field, or the key is
     *     empty or not valid Unicode (before any I/O)
     */
    public WriteOutcome hset(String key, Map<String, String> fields, FenceToken fence) {
        checkKey(key);
        Objects.requireNonNull(fields, "fields");
        Objects.requireNonNull(fence, "fence");
        if (fields.isEmpty()) {
            throw new IllegalArgumentException("hset needs at least one field");
        }
        if (fields.containsKey(fenceField)) {
            throw new IllegalArgumentException("fields must not include the fence field '" + fenceField + "'; fence-guard sets it");
        }
        List<String> args = new ArrayList<>(List.of(fenceField, Long.toString(fence.value()), strictFlag()));
        fields.forEach((f, v) -> {
            args.add(Objects.requireNonNull(f, "field name"));
            args.add(Objects.requireNonNull(v, "value of field " + f));
        });
        List<Object> r = scripts.multi(HSET, key, new String[] {key}, args.toArray(String[]::new));
        return outcome(r, key, fence);
    }

    /**
     * Deletes the string or hash at {@code key} if the policy admits {@code fence}, keeping a tombstone
     * (the string's fence key; the hash's fence field alone). Deleting again under a newer fence raises
     * the tombstone's fence.
     *
     * @return {@code Applied}, {@code Stale(stored)}, or {@code NotFound} if there is neither data nor tombstone
     */
    public WriteOutcome delete(String key, FenceToken fence) {
        checkKey(key);
        Objects.requireNonNull(fence, "fence");
        List<Object> r = scripts.multi(DEL, key, new String[] {key, RedisKeys.resourceFenceKey(fencePrefix, key)}, fenceField,
                Long.toString(fence.value()), strictFlag());
        return outcome(r, key, fence);
    }

    /**
     * Records {@code fence} for string key {@code key} without changing its value. Do this right after
     * acquiring a lock and <em>before</em> reading the key for a read-modify-write: from then on a
     * zombie's write is refused, so it cannot slip in between your read and your write.
     *
     * @return {@code Applied} or {@code Stale(stored)}
     */
    public WriteOutcome claim(String key, FenceToken fence) {
        return eval("return nil", List.of(key), List.of(), fence).outcome();
    }

    /**
     * Runs your own Lua write after the fence check, in the same script. {@code keys.get(0)} is the
     * guarded resource; its fence is kept in {@link #fenceKeyOf(String)}, appended as the last element
     * of {@code KEYS}; the fence and the policy flag are appended as the last two elements of
     * {@code ARGV}. Your code runs as the body of a function and may {@code return} a value. All
     * {@code keys} must be in one Cluster slot (give them a hash tag).
     *
     * <p>Redis does not roll back a script that fails halfway: writes made before an error stay. The
     * fence is stored only after your code returns, so validate before you write.
     *
     * @return the outcome, and your code's return value when applied
     * @throws IllegalArgumentException if {@code keys} is empty or a key is invalid (before any I/O)
     */
    public ScriptResult eval(String luaBody, List<String> keys, List<String> args, FenceToken fence) {
        Objects.requireNonNull(luaBody, "luaBody");
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(args, "args");
        Objects.requireNonNull(fence, "fence");
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("eval needs at least one key: the guarded resource first");
        }
        keys.forEach(FencedRedis::checkKey);
        Script script = userScripts.computeIfAbsent(luaBody, body -> Script.of("fenced script", PRELUDE + body + "\n" + EPILOGUE));
        List<String> allKeys = new ArrayList<>(keys);
        allKeys.add(RedisKeys.resourceFenceKey(fencePrefix, keys.getFirst()));
        List<String> allArgs = new ArrayList<>(args);
        allArgs.add(Long.toString(fence.value()));
        allArgs.add(strictFlag());
        List<Object> r = scripts.multi(script, keys.getFirst(), allKeys.toArray(String[]::new), allArgs.toArray(String[]::new));
        return new ScriptResult(outcome(r, keys.getFirst(), fence), Optional.ofNullable(r.size() > 2 ? r.get(2) : null));
    }

    /**
     * The outcome of {@link #eval} and, when applied, what your code returned (Redis reply types:
     * {@code Long}, {@code String}, {@code List}).
     */
    public record ScriptResult(WriteOutcome outcome, Optional<Object> value) {}

    @Override
    public void close() {
        connections.close();
    }

    private WriteOutcome outcome(List<Object> r, String key, FenceToken fence) {
        long status = (Long) r.get(0);
        if (status == 1) {
            return new WriteOutcome.Applied(key, fence.value());
        }
        if (status == -1) {
            return new WriteOutcome.NotFound(key);
        }
        return stale(key, fence, (Long) r.get(1));
    }

    private WriteOutcome stale(String key, FenceToken fence, long stored) {
        metrics.staleWriteRejected("redis");
        return new WriteOutcome.Stale(key, fence.value(), stored, policy);
    }

    private String strictFlag() {
        return policy == FencePolicy.STRICTLY_NEWER ? "1" : "0";
    }

    private static String checkKey(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("key must not be empty");
        }
        dev.fenceguard.core.internal.Text.requireValidUnicode("key", key);
        return key;
    }

    private static String resource(String name) {
        try (InputStream in = Script.class.getResourceAsStream(name)) {
            return new String(Objects.requireNonNull(in, name).readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Options for {@link FencedRedis}. Not thread-safe. */
    public static final class Builder {
        private final Supplier<Connections> connect;
        private FencePolicy policy = FencePolicy.SAME_OR_NEWER;
        private String fenceField = "_fence";
        private String fencePrefix = "fg:fence:";
        private LockMetrics metrics;

        private Builder(Supplier<Connections> connect) {
            this.connect = connect;
        }

        /** The write rule; default {@link FencePolicy#SAME_OR_NEWER}. */
        public Builder withPolicy(FencePolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * The hash field that holds a hash's fence; default {@code _fence}.
         *
         * @throws IllegalArgumentException if empty
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
         * Prefix of the companion keys holding string fences; default {@code fg:fence:}.
         *
         * @throws IllegalArgumentException if it contains a brace or NUL or is longer than 64 characters
         */
        public Builder withFenceKeyPrefix(String prefix) {
            this.fencePrefix = RedisKeys.requirePrefix(prefix);
            return this;
        }

        /** Where stale-write rejections are counted; default {@link LockMetrics#automatic()}. */
        public Builder withMetrics(LockMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /**
         * Connects (if built from a client).
         *
         * @throws dev.fenceguard.core.FenceGuardException UNAVAILABLE if the server cannot be reached
         */
        public FencedRedis build() {
            try {
                return new FencedRedis(this);
            } catch (RedisException e) {
                throw ScriptRunner.map(e, null, "connect");
            }
        }
    }
}
