package dev.fenceguard.redis;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.core.internal.Horizon;
import dev.fenceguard.core.internal.WarmUps;
import dev.fenceguard.core.spi.WriteObservation;
import dev.fenceguard.core.spi.WriteRule;
import dev.fenceguard.redis.internal.RedisHandle;
import dev.fenceguard.redis.internal.RedisKeys;
import dev.fenceguard.redis.internal.Script;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The non-blocking face of {@link FencedRedis}: the same fenced writes, with the same outcomes and the
 * same atomicity (one Lua script each), each returning a {@link CompletionStage} at once. No thread
 * waits for Redis; the blocking face is a wait on these very stages. Get it with
 * {@link FencedRedis#async()}.
 *
 * <pre>{@code
 * AsyncFencedRedis writes = redis.fencedWrites().async();
 * CompletionStage<Optional<WriteOutcome>> written = locks.async().withLock("sku-1", ttl, maxWait, lease ->
 *         writes.set("stock:sku-1", lease.fence(), "41").thenApply(WriteOutcome::orThrow));   // empty: lock not had
 * }</pre>
 *
 * <p>Invalid arguments (an empty key, a key in fence-guard's own key space, an empty {@code hset})
 * throw {@link IllegalArgumentException} or {@link NullPointerException} at once, before any I/O,
 * rather than failing the stage. Redis failures complete the stage with a
 * {@link dev.fenceguard.core.FenceGuardException}; a write that has no answer within the call timeout
 * ({@link FenceGuardRedis.Builder#withCallTimeout}) fails with {@code TIMEOUT}, whatever the server
 * does. After a {@code TIMEOUT} (or a cancel of the stage) the script may still run, since Redis cannot
 * be told to drop a command it was sent: it then runs whole or not at all, and judges the fence as
 * always, so a late write is never applied over a newer fence.
 *
 * <p>Stages complete on Lettuce's event loop (or, for a timeout, on the {@code fence-guard-timer} thread).
 * Chain non-blocking work only, or use the {@code *Async} methods of {@link CompletionStage}; in
 * particular, never call the blocking {@link FencedRedis} from such a callback: it would wait for an
 * answer the blocked event loop cannot deliver. Kotlin coroutines can {@code await()} these stages.
 *
 * <p>Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class AsyncFencedRedis {

    /** The data key of the warm-up's set: it has no brace, so it is in none of fence-guard's key spaces. */
    private static final String WARM_UP_KEY = "warm-up";
    private static final String HORIZON_LIBRARY = resource("horizon.lua");
    /** The fence reading and judging that every fenced script shares: Redis scripts cannot require one another. */
    private static final String FENCE_RECORD_LIBRARY = resource("fence_record.lua");
    private static final Scripts WITHOUT_HORIZON = Scripts.of(Optional.empty());

    /**
     * The built-in scripts, in their variant without a horizon (today's scripts, to the command) or with one
     * ({@code horizon.lua} put before each, its numbers filled in): a script per {@link FenceGuardRedis}, as
     * its horizon is written into the text. {@code fence_record.lua} goes before every fenced script and the
     * prelude in both variants (after {@code horizon.lua}, whose functions it calls); the warm-up needs neither.
     *
     * @param warmUpSet called as {@link #set} is, it reads the fence key as SET does and answers "applied",
     *     writing nothing
     * @param prelude the text put before a user's {@link #eval} body, with {@code ${FENCE_FIELD}} left to fill in
     */
    record Scripts(Script set, Script hset, Script delete, Script claim, Script warmUpSet, String prelude, String epilogue,
            boolean horizon) {

        static Scripts of(Optional<Horizon> horizon) {
            if (horizon.isEmpty() && WITHOUT_HORIZON != null) {
                return WITHOUT_HORIZON;
            }
            Map<String, String> values = horizon.map(h -> Map.of("HORIZON", "true",
                    "HORIZON_US", Long.toString(h.ageMicros()),
                    // H + M in whole milliseconds, rounded up: a tombstone may outlive the rule, never go before it.
                    "KEEP_MS", Long.toString(Math.ceilDiv(h.purgeMicros(), 1000L)),
                    "EPOCH_US", Long.toString(ClockFloor.EPOCH_MILLIS * 1000),
                    "EPOCH_MS", Long.toString(ClockFloor.EPOCH_MILLIS),
                    "PER_MS", Long.toString(ClockFloor.PER_MILLISECOND),
                    "US_PER_FENCE", Long.toString(ClockFloor.MICROS_PER_FENCE))).orElse(Map.of("HORIZON", "false"));
            String library = (horizon.isPresent() ? HORIZON_LIBRARY : "") + FENCE_RECORD_LIBRARY;
            return new Scripts(script("fenced_set", library, values), script("fenced_hset", library, values),
                    script("fenced_del", library, values), script("fenced_claim", library, values),
                    script("fenced_set_warm_up", "", values), fill(library + resource("fenced_eval_prelude.lua"), values),
                    fill(resource("fenced_eval_epilogue.lua"), values), horizon.isPresent());
        }

        private static Script script(String name, String library, Map<String, String> values) {
            String source = fill(library + resource(name + ".lua"), values);
            if (source.contains("${")) {
                throw new IllegalStateException("unfilled placeholder in " + name + ".lua");
            }
            return Script.of(name, source);
        }

        private static String fill(String source, Map<String, String> values) {
            for (Map.Entry<String, String> e : values.entrySet()) {
                source = source.replace("${" + e.getKey() + "}", e.getValue());
            }
            return source;
        }
    }

    /**
     * What every fenced writer of one {@link FenceGuardRedis} shares: where fences live, which key
     * spaces are refused (the lock backends' and the flight store's), the call timeout, the horizon, the
     * scripts, and the cache of users' scripts (whose prelude depends only on the fence field and the horizon).
     */
    record Space(String fencePrefix, String fenceField, List<String> lockPrefixes, String flightPrefix, Duration timeout,
            Scripts scripts, String prelude, Map<String, Script> userScripts) {

        Space(String fencePrefix, String fenceField, List<String> lockPrefixes, String flightPrefix, Duration timeout,
                Optional<Horizon> horizon) {
            this(fencePrefix, fenceField, List.copyOf(lockPrefixes), flightPrefix, timeout, Scripts.of(horizon), fenceField);
        }

        private Space(String fencePrefix, String fenceField, List<String> lockPrefixes, String flightPrefix, Duration timeout,
                Scripts scripts, String field) {
            this(fencePrefix, fenceField, lockPrefixes, flightPrefix, timeout, scripts,
                    scripts.prelude().replace("${FENCE_FIELD}", luaString(field)), new ConcurrentHashMap<>());
        }
    }

    private final RedisHandle redis;
    private final Space space;
    private final WriteRule rule;
    private final String strictFlag;
    // The key spaces every write checks its key against, made once: not three string concatenations per write.
    private final String fenceNamespace;
    private final String[] lockNamespaces;
    private final String flightNamespace;

    /** {@code rule}'s encoding is {@link FenceEncoding#INTEGER}: Lua compares fences as numbers. */
    AsyncFencedRedis(RedisHandle redis, Space space, WriteRule rule) {
        this.redis = redis;
        this.space = space;
        this.rule = rule;
        this.strictFlag = rule.policy() == FencePolicy.STRICTLY_NEWER ? "1" : "0";
        this.fenceNamespace = RedisKeys.namespace(space.fencePrefix());
        this.lockNamespaces = space.lockPrefixes().stream().map(RedisKeys::namespace).toArray(String[]::new);
        this.flightNamespace = RedisKeys.namespace(space.flightPrefix());
    }

    /** The write rule these writes apply. */
    public FencePolicy policy() {
        return rule.policy();
    }

    /**
     * {@link FencedRedis#set}, without waiting.
     *
     * @return a stage of {@code Applied} or {@code Stale(stored)}
     * @throws IllegalArgumentException if the key is empty, not valid Unicode, or in fence-guard's own key
     *     space, before any I/O
     */
    public CompletionStage<WriteOutcome> set(String key, FenceToken fence, String value) {
        checkKey(key);
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(fence, "fence");
        return rule.observeAsync("string", "set", fence, setting(space.scripts().set(), key, key, value, fence));
    }

    /**
     * The fenced set of {@code key} with {@code script}, unobserved; {@code subject} names the key in
     * errors (null for the warm-up, which runs this with the warm-up script so that the very lines of a
     * real set are linked before it).
     */
    private Supplier<CompletableFuture<WriteOutcome>> setting(Script script, String key, String subject, String value, FenceToken fence) {
        if (space.scripts().horizon()) {
            // With a horizon the script answers a list, as the others do: it has three outcomes.
            return () -> judged(redis.multi(script, subject, keysOf(key), value, Long.toString(fence.value()), strictFlag,
                    space.fenceField()), subject, key, fence, "fenced set");
        }
        return () -> bounded(redis.integer(script, subject, keysOf(key), value, Long.toString(fence.value()), strictFlag,
                space.fenceField()), subject, "fenced set")
                .thenApply(r -> r > 0 ? new WriteOutcome.Applied(key, fence.value()) : rule.stale(key, fence, -r));
    }

    /**
     * {@link FencedRedis#hset}, without waiting. A key holding another type fails the stage with
     * {@code INVALID_ARGUMENT} (nothing written).
     *
     * @return a stage of {@code Applied} or {@code Stale(stored)}
     * @throws IllegalArgumentException if {@code fields} is empty or names the fence field, or the key is
     *     empty, not valid Unicode, or in fence-guard's own key space, before any I/O
     */
    public CompletionStage<WriteOutcome> hset(String key, FenceToken fence, Map<String, String> fields) {
        checkKey(key);
        Objects.requireNonNull(fields, "fields");
        Objects.requireNonNull(fence, "fence");
        if (fields.isEmpty()) {
            throw new IllegalArgumentException("hset needs at least one field");
        }
        if (fields.containsKey(space.fenceField())) {
            throw new IllegalArgumentException("fields must not include the fence field '" + space.fenceField()
                    + "'; fence-guard sets it");
        }
        List<String> args = new ArrayList<>(List.of(space.fenceField(), Long.toString(fence.value()), strictFlag));
        fields.forEach((f, v) -> {
            args.add(Objects.requireNonNull(f, "field name"));
            args.add(Objects.requireNonNull(v, "value of field " + f));
        });
        return rule.observeAsync("hash", "hset", fence,
                () -> judged(redis.multi(space.scripts().hset(), key, keysOf(key), args.toArray(String[]::new)), key, fence, "fenced hset"));
    }

    /**
     * {@link FencedRedis#delete}, without waiting.
     *
     * @return a stage of {@code Applied} (the key is absent and its tombstone holds {@code fence}) or
     *     {@code Stale(stored)}
     * @throws IllegalArgumentException if the key is empty, not valid Unicode, or in fence-guard's own key
     *     space, before any I/O
     */
    public CompletionStage<WriteOutcome> delete(String key, FenceToken fence) {
        checkKey(key);
        Objects.requireNonNull(fence, "fence");
        return rule.observeAsync("key", "delete", fence, () -> judged(redis.multi(space.scripts().delete(), key, keysOf(key), space.fenceField(),
                Long.toString(fence.value()), strictFlag), key, fence, "fenced delete"));
    }

    /**
     * {@link FencedRedis#claim}, without waiting: chain your read and your write after it.
     *
     * @return a stage of {@code Applied} (the key has data), {@code NotFound} (no data; the tombstone now
     *     holds {@code fence}) or {@code Stale(stored)}
     * @throws IllegalArgumentException if the key is empty, not valid Unicode, or in fence-guard's own key
     *     space, before any I/O
     */
    public CompletionStage<WriteOutcome> claim(String key, FenceToken fence) {
        checkKey(key);
        Objects.requireNonNull(fence, "fence");
        return rule.observeAsync("key", "claim", fence, () -> judged(redis.multi(space.scripts().claim(), key, keysOf(key), space.fenceField(),
                Long.toString(fence.value()), strictFlag), key, fence, "fenced claim"));
    }

    /**
     * {@link FencedRedis#eval}, without waiting. An error raised by your code fails the stage with a
     * {@link dev.fenceguard.core.FenceGuardException} (the fence stays recorded, see there).
     *
     * @return a stage of the outcome, and your code's return value when applied
     * @throws IllegalArgumentException if {@code keys} is empty or a key is empty, not valid Unicode, or in
     *     fence-guard's own key space (every key, not only the first), before any I/O
     */
    public CompletionStage<FencedRedis.ScriptResult> eval(String luaBody, List<String> keys, FenceToken fence, List<String> args) {
        Objects.requireNonNull(luaBody, "luaBody");
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(args, "args");
        Objects.requireNonNull(fence, "fence");
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("eval needs at least one key: the guarded resource first");
        }
        keys.forEach(this::checkKey);
        Script script = space.userScripts().computeIfAbsent(luaBody,
                body -> Script.of("fenced script", space.prelude() + body + "\n" + space.scripts().epilogue()));
        String guarded = keys.getFirst();
        List<String> allKeys = new ArrayList<>(keys);
        allKeys.add(RedisKeys.resourceFenceKey(space.fencePrefix(), guarded));
        List<String> allArgs = new ArrayList<>(args);
        allArgs.add(Long.toString(fence.value()));
        allArgs.add(strictFlag);
        WriteObservation observation = rule.startWrite("script", "eval", fence);
        CompletableFuture<FencedRedis.ScriptResult> result;
        try (LockObservations.Scope scope = observation.openScope()) {
            result = bounded(redis.multi(script, guarded, allKeys.toArray(String[]::new), allArgs.toArray(String[]::new)),
                    guarded, "fenced script").thenApply(r ->
                    new FencedRedis.ScriptResult(outcome(r, guarded, fence), Optional.ofNullable(r.size() > 2 ? r.get(2) : null)));
        } catch (RuntimeException | Error e) {
            observation.fail(e);
            throw e;
        }
        return result.whenComplete((r, error) -> {
            if (error != null) {
                observation.fail(error);
            } else {
                observation.finish(r.outcome());
            }
        });
    }

    /**
     * {@link FencedRedis#warmUp()}, without waiting.
     *
     * @return a stage that completes when the scripts are loaded and the set path has run five times; it fails with a
     *     {@link dev.fenceguard.core.FenceGuardException} ({@code UNAVAILABLE}, or {@code TIMEOUT} after the
     *     call timeout)
     * @since 0.1
     */
    public CompletionStage<Void> warmUp() {
        RedisKeys.fillSlotTags();
        WarmUps.outcomes();
        String key = checkKey(WARM_UP_KEY); // the checks of every write, on a key no key space of fence-guard's holds
        // The scripts loaded once, then the set path run in rounds, as LockClient.warmUp does (WarmUps.ROUNDS).
        Scripts scripts = space.scripts();
        CompletableFuture<Void> call = WarmUps.rounds(redis.load(null, scripts.set(), scripts.hset(), scripts.delete(),
                scripts.claim(), scripts.warmUpSet()), () -> setting(scripts.warmUpSet(), key, null, "", FenceToken.of(1)).get());
        return bounded(call, null, "warm-up");
    }

    /** The data key and its fence key: the {@code KEYS} of every built-in fenced script. */
    private String[] keysOf(String key) {
        return new String[] {key, RedisKeys.resourceFenceKey(space.fencePrefix(), key)};
    }

    /** Bounded by the call timeout; the outcome is judged only once it is delivered, so a late reply counts nothing. */
    private <T> CompletableFuture<T> bounded(CompletableFuture<T> call, String key, String operation) {
        return RedisHandle.bounded(call, space.timeout(), key, operation);
    }

    private CompletableFuture<WriteOutcome> judged(CompletableFuture<List<Object>> call, String key, FenceToken fence,
            String operation) {
        return judged(call, key, key, fence, operation);
    }

    /** {@code subject} names the key in errors (null for the warm-up), {@code key} in the outcome. */
    private CompletableFuture<WriteOutcome> judged(CompletableFuture<List<Object>> call, String subject, String key, FenceToken fence,
            String operation) {
        return bounded(call, subject, operation).thenApply(r -> outcome(r, key, fence));
    }

    /**
     * {@code {1, fence}} applied, {@code {-1, fence}} recorded on a tombstone, {@code {0, stored}} stale,
     * {@code {-2, horizon}} refused by the horizon: no fence record, and the fence at or below {@code tick(TIME - H)}.
     */
    private WriteOutcome outcome(List<Object> r, String key, FenceToken fence) {
        long status = (Long) r.get(0);
        if (status == 1) {
            return new WriteOutcome.Applied(key, fence.value());
        }
        if (status == -1) {
            return new WriteOutcome.NotFound(key);
        }
        if (status == -2) {
            return rule.belowHorizon(key, fence, (Long) r.get(1));
        }
        return rule.stale(key, fence, (Long) r.get(1));
    }

    /** The fence key of {@code key}, after the same checks as every write. */
    String fenceKeyOf(String key) {
        return RedisKeys.resourceFenceKey(space.fencePrefix(), checkKey(key));
    }

    private String checkKey(String key) {
        WriteRule.checkKey("key", key);
        if (key.startsWith(fenceNamespace)) {
            throw ownKeySpace(key, space.fencePrefix(), "hold the fences of guarded keys (fence key prefix '" + space.fencePrefix()
                    + "'), and writing one could lower another key's fence");
        }
        for (int i = 0; i < lockNamespaces.length; i++) {
            if (key.startsWith(lockNamespaces[i])) {
                String prefix = space.lockPrefixes().get(i);
                throw ownKeySpace(key, prefix, "belong to the lock backend with key prefix '" + prefix
                        + "', and writing one could rewind a lock's fence or take over a lock");
            }
        }
        if (key.startsWith(flightNamespace)) {
            throw ownKeySpace(key, space.flightPrefix(), "belong to the flight store with key prefix '" + space.flightPrefix()
                    + "', and writing one could rewind a flight's fence or replace its result");
        }
        return key;
    }

    private static IllegalArgumentException ownKeySpace(String key, String prefix, String why) {
        return new IllegalArgumentException("key " + shown(key) + " is in fence-guard's own key space: keys starting with '"
                + RedisKeys.namespace(prefix) + "' " + why);
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

    @Override
    public String toString() {
        return "AsyncFencedRedis[" + redis.topology() + ", " + rule.policy() + "]";
    }
}
