package dev.fenceguard.redis;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.redis.internal.RedisHandle;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Fenced writes to Redis: each one Lua script that checks the presented fence against the stored one
 * and, only if the {@link FencePolicy} admits it, writes the data and the new fence together.
 *
 * <pre>{@code
 * try (FenceGuardRedis redis = FenceGuardRedis.builder(redisClient).build()) {
 *     FencedRedis writes = redis.fencedWrites();
 *     writes.set("stock:sku-1", lease.fence(), "41").orThrow();               // StaleFenceException for a zombie
 *     writes.hset("order:42", lease.fence(), Map.of("status", "paid")).orThrow();
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
 * Tombstones are kept forever (one small key or hash per deleted or claimed-absent key) unless the
 * {@link FenceGuardRedis} was built {@linkplain FenceGuardRedis.Builder#withHorizon with a horizon}: then a
 * write that finds no fence for its key needs a fence above the horizon ({@code Stale} with reason
 * {@code BELOW_HORIZON} otherwise), and every tombstone expires once the horizon has passed its fence by
 * the clock margin; see {@code docs/redis.md}. A hash's fence
 * lives in the hash, so it goes with the hash if you {@code EXPIRE} or {@code DEL} it yourself: delete
 * guarded hashes with {@link #delete}.
 *
 * <p>Resource keys never reach fence-guard's own keys. Every key of a lock backend with prefix
 * {@code p} starts with <code>p{</code> (<code>fg:{</code> by default), every key of the flight store
 * with <code>&lt;flight key prefix&gt;{</code> (<code>fg-sf:{</code> by default), and every fence key with
 * <code>&lt;fence key prefix&gt;{</code> (<code>fg:fence:{</code> by default). Every operation refuses a
 * resource key in one of those namespaces with an {@link IllegalArgumentException}, before any I/O: a
 * fenced write there could rewind a lock's or a flight's fence counter, take over a lock, or lower
 * another key's fence. The lock backend and flight store of the same {@link FenceGuardRedis} are refused
 * without being named; name other lock backends that share the database with
 * {@link FenceGuardRedis.Builder#withOtherLockKeyPrefixes}. {@link FenceGuardRedis.Builder#build()}
 * refuses a fence or flight key prefix equal to another of these prefixes, since two kinds of internal
 * keys would then meet.
 *
 * <p>Each write is bounded by the call timeout ({@link FenceGuardRedis.Builder#withCallTimeout}): a
 * write without an answer by then throws {@code TIMEOUT}, and may still run later (whole or not at all,
 * judged by its fence as always). This face waits on the stages of {@link #async()}, so the two faces
 * give the same outcomes; do not call it from a callback that runs on Lettuce's event loop.
 *
 * <p>Immutable and thread-safe. It has no lifecycle of its own: closing the {@link FenceGuardRedis} it
 * came from closes the connection.
 *
 * @since 0.1
 */
public final class FencedRedis {

    private final AsyncFencedRedis async;

    FencedRedis(AsyncFencedRedis async) {
        this.async = async;
    }

    /**
     * The same writes without waiting: each returns a {@link java.util.concurrent.CompletionStage}.
     *
     * @since 0.1
     */
    public AsyncFencedRedis async() {
        return async;
    }

    /**
     * Gets these writes ready for their first call, at startup rather than in the first request:
     * {@code SCRIPT LOAD} of the {@link #set}, {@link #hset}, {@link #delete} and {@link #claim} scripts, so
     * the first write is one EVALSHA instead of a NOSCRIPT answer and a full EVAL (loading a script
     * writes no key), and the names of fence keys for every Cluster slot, found once per process. Then
     * the client's code of a {@link #set} runs five times, with a script sent exactly as the set script is
     * that reads the fence key of {@code warm-up} and answers "applied" without writing. Idempotent;
     * bounded, as a whole, by the call timeout. (Scripts given to {@link #eval} are loaded on their first call.)
     *
     * @throws dev.fenceguard.core.FenceGuardException {@code UNAVAILABLE} if Redis cannot be reached,
     *     {@code TIMEOUT} if it does not answer within the call timeout
     * @since 0.1
     */
    public void warmUp() {
        RedisHandle.await(async.warmUp(), null, "warm-up");
    }

    /**
     * The write rule these writes apply.
     *
     * @since 0.1
     */
    public FencePolicy policy() {
        return async.policy();
    }

    /**
     * The key that holds the fence of string key {@code key}: same Cluster slot as {@code key}.
     *
     * @throws IllegalArgumentException if {@code key} is empty, not valid Unicode, or in fence-guard's
     *     own key space (see the class comment)
     */
    public String fenceKeyOf(String key) {
        return async.fenceKeyOf(key);
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
    public WriteOutcome set(String key, FenceToken fence, String value) {
        return RedisHandle.await(async.set(key, fence, value), key, "fenced set");
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
    public WriteOutcome hset(String key, FenceToken fence, Map<String, String> fields) {
        return RedisHandle.await(async.hset(key, fence, fields), key, "fenced hset");
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
        return RedisHandle.await(async.delete(key, fence), key, "fenced delete");
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
        return RedisHandle.await(async.claim(key, fence), key, "fenced claim");
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
    public ScriptResult eval(String luaBody, List<String> keys, FenceToken fence, List<String> args) {
        return RedisHandle.await(async.eval(luaBody, keys, fence, args), keys.getFirst(), "fenced script"); // keys checked by eval
    }

    /**
     * The outcome of {@link #eval} and, when applied, what your code returned (Redis reply types:
     * {@code Long}, {@code String}, {@code List}).
     */
    public record ScriptResult(WriteOutcome outcome, Optional<Object> value) {}

    @Override
    public String toString() {
        return "FencedRedis[" + async + "]";
    }
}
