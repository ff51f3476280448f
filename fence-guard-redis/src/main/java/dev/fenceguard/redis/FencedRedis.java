package dev.fenceguard.redis;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.WriteRule;
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
 *   <li>strings ({@link #set}), keys of other types, keys deleted or claimed while not a hash, keys that
 *       never existed, and {@link #eval} scripts: in a companion key {@code fg:fence:{<tag>}:<key>} whose
 *       hash tag is chosen to fall in the same Cluster slot as {@code key} ({@link #fenceKeyOf(String)});</li>
 *   <li>hashes ({@link #hset}): in a field of the hash itself, {@code _fence} by default.</li>
 * </ul>
 * Every operation takes the key's stored fence to be the larger of the two (0 if neither exists), so
 * a fence recorded one way is honoured by all the others: a delete of a key that never existed refuses
 * an older {@code hset}, and an {@code hset} refuses an older {@code set}. Once a key has seen fence
 * {@code f}, no operation with a lower fence changes it, whatever it is and whether it exists.
 *
 * <p>{@link #delete} keeps a tombstone: a hash keeps only its fence field, any other key is deleted
 * and its fence key kept (or created, for a key that never existed), so a zombie cannot write it back.
 * Tombstones are kept until you remove them: one small key or hash per deleted or claimed-absent key;
 * see {@code docs/redis.md} for the cost and for when a tombstone may be removed safely. A hash's fence
 * lives in the hash, so it goes with the hash if you {@code EXPIRE} or {@code DEL} it yourself: delete
 * guarded hashes with {@link #delete}.
 *
 * <p>Resource keys never reach fence-guard's own keys. Every key of a lock backend with prefix
 * {@code p} starts with <code>p{</code> (<code>fg:{</code> by default), and every fence key starts with
 * <code>&lt;fence key prefix&gt;{</code> (<code>fg:fence:{</code> by default). Every operation refuses a
 * resource key in one of those namespaces with an {@link IllegalArgumentException}, before any I/O: a
 * fenced write there could rewind a lock's fence counter, take over a lock, or lower another key's
 * fence. Tell the builder the prefixes of the lock backends that share the database
 * ({@link Builder#withLockKeyPrefixes}); {@link Builder#build()} refuses a fence key prefix equal to one
 * of them, since the two kinds of internal keys would then meet.
 *
 * <p>Thread-safe. Closing closes the connection it opened (not one you passed in).
 */
public final class FencedRedis implements AutoCloseable {

    private static final Script SET = Script.load("fenced_set");
    private static final Script HSET = Script.load("fenced_hset");
    private static final Script DEL = Script.load("fenced_del");
    private static final Script CLAIM = Script.load("fenced_claim");
    private static final String PRELUDE = resource("fenced_eval_prelude.lua");
    private static final String EPILOGUE = resource("fenced_eval_epilogue.lua");

    private final Connections connections;
    private final ScriptRunner scripts;
    private final FencePolicy policy;
    private final String fenceField;
    private final String fencePrefix;
    private final List<String> lockPrefixes;
    private final WriteRule rule;
    private final String prelude;
    private final Map<String, Script> userScripts = new ConcurrentHashMap<>();

    private FencedRedis(Builder b) {
        this.connections = b.connect.get();
        this.scripts = new ScriptRunner(connections.commands());
        this.policy = b.policy;
        this.fenceField = b.fenceField;
        this.fencePrefix = b.fencePrefix;
        this.lockPrefixes = b.lockPrefixes;
        // Lua compares fences as numbers, so Redis always stores the integer form.
        this.rule = new WriteRule(b.policy, FenceEncoding.INTEGER, b.metrics != null ? b.metrics : LockMetrics.automatic(), "redis");
        this.prelude = PRELUDE.replace("${FENCE_FIELD}", luaString(fenceField));
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

    /**
     * The key that holds the fence of string key {@code key}: same Cluster slot as {@code key}.
     *
     * @throws IllegalArgumentException if {@code key} is empty, not valid Unicode, or in fence-guard's
     *     own key space (see the class comment)
     */
    public String fenceKeyOf(String key) {
        return RedisKeys.resourceFenceKey(fencePrefix, checkKey(key));
    }

    /**
     * {@code SET key value} if the policy admits {@code fence} over the key's stored fence (its fence key,
     * or a hash's fence field if {@code key} holds a hash). A tombstone left by {@link #delete} or
     * {@link #claim} counts: an older fence is {@code Stale} and the key stays absent; an admitted one
     * recreates the key.
     *
     * @return {@code Applied} or {@code Stale(stored)}; a key never fenced has fence 0
     * @throws IllegalArgumentException if the key is empty, not valid Unicode, or in fence-guard's own key
     *     space (see the class comment), before any I/O
     */
    public WriteOutcome set(String key, String value, FenceToken fence) {
        checkKey(key);
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(fence, "fence");
        long r = scripts.integer(SET, key, new String[] {key, RedisKeys.resourceFenceKey(fencePrefix, key)}, value,
                Long.toString(fence.value()), strictFlag(), fenceField);
        return r > 0 ? new WriteOutcome.Applied(key, fence.value()) : stale(key, fence, -r);
    }

    /**
     * {@code HSET key field value ...} plus the fence field, if the policy admits {@code fence} over the
     * key's stored fence: the larger of the hash's fence field and the key's fence key (which holds the
     * tombstone of a key deleted or claimed while it was not a hash, or never existed, and the fence of
     * {@link #eval} scripts). When applied, the fence is in the hash and the fence key is removed.
     *
     * @return {@code Applied} or {@code Stale(stored)}
     * @throws dev.fenceguard.core.FenceGuardException {@code INVALID_ARGUMENT} if {@code key} holds another
     *     type (nothing written)
     * @throws IllegalArgumentException if {@code fields} is empty or names the fence field, or the key is
     *     empty, not valid Unicode, or in fence-guard's own key space (see the class comment), before any I/O
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
        List<Object> r = scripts.multi(HSET, key, new String[] {key, RedisKeys.resourceFenceKey(fencePrefix, key)},
                args.toArray(String[]::new));
        return outcome(r, key, fence);
    }

    /**
     * Deletes the string or hash at {@code key} if the policy admits {@code fence}, keeping a tombstone
     * (a hash's fence field alone; otherwise the key's fence key). Deleting again under a newer fence
     * raises the tombstone's fence. A key that never existed gets a tombstone too (its fence key), so a
     * zombie's older {@link #set} or {@link #hset} cannot create it afterwards: the delete is
     * {@code Applied} whether the key existed, was deleted already, or never existed.
     *
     * @return {@code Applied} (the key is absent and its tombstone holds {@code fence}) or
     *     {@code Stale(stored)} (nothing changed)
     * @throws IllegalArgumentException if the key is empty, not valid Unicode, or in fence-guard's own key
     *     space (see the class comment), before any I/O
     */
    public WriteOutcome delete(String key, FenceToken fence) {
        checkKey(key);
        Objects.requireNonNull(fence, "fence");
        List<Object> r = scripts.multi(DEL, key, new String[] {key, RedisKeys.resourceFenceKey(fencePrefix, key)}, fenceField,
                Long.toString(fence.value()), strictFlag());
        return outcome(r, key, fence);
    }

    /**
     * Records {@code fence} for {@code key} without changing its data (in a hash's fence field, otherwise
     * in the key's fence key). Do this right after acquiring a lock and <em>before</em> reading the key
     * for a read-modify-write: from then on a zombie's write is refused, so it cannot slip in between
     * your read and your write.
     *
     * <p>On a key that is absent or deleted, a claim the policy admits still records {@code fence} on the
     * tombstone (creating one if the key never existed) and returns {@code NotFound}: there is no data,
     * but older fences are refused from now on. A hash holding only its fence field is a tombstone.
     *
     * @return {@code Applied} (the key has data and now holds {@code fence}), {@code NotFound} (no data;
     *     the tombstone now holds {@code fence}) or {@code Stale(stored)}
     * @throws IllegalArgumentException if the key is empty, not valid Unicode, or in fence-guard's own key
     *     space (see the class comment), before any I/O
     */
    public WriteOutcome claim(String key, FenceToken fence) {
        checkKey(key);
        Objects.requireNonNull(fence, "fence");
        List<Object> r = scripts.multi(CLAIM, key, new String[] {key, RedisKeys.resourceFenceKey(fencePrefix, key)}, fenceField,
                Long.toString(fence.value()), strictFlag());
        return outcome(r, key, fence);
    }

    /**
     * Runs your own Lua write after the fence check, in the same script. {@code keys.get(0)} is the
     * guarded resource: the check is against its stored fence (its fence key {@link #fenceKeyOf(String)},
     * or, if it holds a hash, the larger of that and the hash's fence field), and the fence is recorded in
     * its fence key, which is appended as the last element of {@code KEYS}; the fence and the policy flag
     * are appended as the last two elements of {@code ARGV}. Your code runs as the body of a function and
     * may {@code return} a value. All {@code keys} must be in one Cluster slot (give them a hash tag); only
     * the first is guarded: other keys your code writes carry no fence of their own.
     *
     * <p>The fence is recorded <em>before</em> your code runs. Redis does not roll back a script that fails
     * halfway: writes made before an error stay, and so does the fence, which then refuses older writers
     * as it should. The flip side: a script that fails before writing anything still records its fence
     * (under {@link FencePolicy#STRICTLY_NEWER} that uses up the lease's one write). Validate before you write.
     *
     * @return the outcome, and your code's return value when applied
     * @throws IllegalArgumentException if {@code keys} is empty or a key is empty, not valid Unicode, or in
     *     fence-guard's own key space (see the class comment): every key, not only the first, since your
     *     code may write any of them (before any I/O)
     */
    public ScriptResult eval(String luaBody, List<String> keys, List<String> args, FenceToken fence) {
        Objects.requireNonNull(luaBody, "luaBody");
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(args, "args");
        Objects.requireNonNull(fence, "fence");
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("eval needs at least one key: the guarded resource first");
        }
        keys.forEach(this::checkKey);
        Script script = userScripts.computeIfAbsent(luaBody, body -> Script.of("fenced script", prelude + body + "\n" + EPILOGUE));
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
        return rule.stale(key, fence, stored);
    }

    private String strictFlag() {
        return policy == FencePolicy.STRICTLY_NEWER ? "1" : "0";
    }

    private String checkKey(String key) {
        WriteRule.checkKey("key", key);
        if (key.startsWith(RedisKeys.namespace(fencePrefix))) {
            throw new IllegalArgumentException("key " + shown(key) + " is in fence-guard's own key space: keys starting with '"
                    + RedisKeys.namespace(fencePrefix) + "' hold the fences of guarded keys (fence key prefix '" + fencePrefix
                    + "'), and writing one could lower another key's fence");
        }
        for (String prefix : lockPrefixes) {
            if (key.startsWith(RedisKeys.namespace(prefix))) {
                throw new IllegalArgumentException("key " + shown(key) + " is in fence-guard's own key space: keys starting with '"
                        + RedisKeys.namespace(prefix) + "' belong to the lock backend with key prefix '" + prefix
                        + "', and writing one could rewind a lock's fence or take over a lock");
            }
        }
        return key;
    }

    private static String shown(String key) {
        return "'" + (key.length() > 80 ? key.substring(0, 80) + "..." : key) + "'";
    }

    /** {@code text} as a Lua string literal: every byte but plain ASCII letters and digits as a decimal escape. */
    static String luaString(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') {
                out.append((char) c);
            } else {
                out.append('\\').append(String.format("%03d", c));
            }
        }
        return out.append('"').toString();
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
        private String fencePrefix = RedisKeys.DEFAULT_FENCE_PREFIX;
        private List<String> lockPrefixes = List.of(RedisKeys.DEFAULT_LOCK_PREFIX);
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
         * Prefix of the companion keys holding string fences; default {@code fg:fence:}. It must differ
         * from every lock key prefix ({@link #withLockKeyPrefixes}); {@link #build()} checks.
         *
         * @throws IllegalArgumentException if it contains a brace or NUL or is longer than 64 characters
         */
        public Builder withFenceKeyPrefix(String prefix) {
            this.fencePrefix = RedisKeys.requirePrefix(prefix);
            return this;
        }

        /**
         * The key prefixes of the {@link RedisLockBackend}s whose locks live in the same Redis database
         * ({@link RedisLockBackend.Builder#withKeyPrefix}); default {@code fg:} alone. Replaces the
         * previous list. Resource keys starting with <code>&lt;prefix&gt;{</code> are refused for each.
         * Pass none only if no lock backend shares the database.
         *
         * @throws IllegalArgumentException if a prefix contains a brace or NUL or is longer than 64
         *     characters
         */
        public Builder withLockKeyPrefixes(String... prefixes) {
            Objects.requireNonNull(prefixes, "prefixes");
            List<String> list = new ArrayList<>();
            for (String p : prefixes) {
                list.add(RedisKeys.requirePrefix(p));
            }
            this.lockPrefixes = List.copyOf(list);
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
         * @throws IllegalArgumentException if the fence key prefix equals one of the lock key prefixes
         *     (before connecting): a resource's fence key could then be a lock's key
         * @throws dev.fenceguard.core.FenceGuardException UNAVAILABLE if the server cannot be reached
         */
        public FencedRedis build() {
            if (lockPrefixes.contains(fencePrefix)) {
                throw new IllegalArgumentException("fence key prefix '" + fencePrefix + "' must differ from every lock key prefix "
                        + lockPrefixes + ": a resource's fence key could then be a lock's key or fence counter");
            }
            try {
                return new FencedRedis(this);
            } catch (RedisException e) {
                throw ScriptRunner.map(e, null, "connect");
            }
        }
    }
}
