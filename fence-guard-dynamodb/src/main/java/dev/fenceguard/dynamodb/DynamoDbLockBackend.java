package dev.fenceguard.dynamodb;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.dynamodb.internal.Attributes;
import dev.fenceguard.dynamodb.internal.Bounded;
import dev.fenceguard.dynamodb.internal.DynamoDbErrors;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * A lock backend on Amazon DynamoDB: one item per lock key in the lock table, each operation one
 * conditional {@code UpdateItem} (a lookup is one strongly consistent {@code GetItem}). Get it from
 * {@link FenceGuardDynamoDb#lockBackend()}.
 *
 * <p><b>Clock: the client's.</b> A DynamoDB condition cannot read a server clock, so expiry is judged by
 * the clock of the client that sends the write ({@link FenceGuardDynamoDb.Builder#withClockSkewAllowance}):
 * an acquisition stores {@code clientNow + ttl} as the expiry; an extension or release acts only on a lease
 * whose expiry is after the sender's {@code now}; an acquisition takes over an expired lease only once its
 * expiry is at least the skew allowance behind the acquirer's {@code now}. So two holders cannot overlap as
 * long as no two clients' clocks differ by more than the allowance (the holder's own view,
 * {@link dev.fenceguard.core.Lease#isValid()}, runs on its monotonic clock from the moment it sent the
 * acquisition, so it ends before the stored expiry). Clocks further apart than that can let a new holder
 * in while the old one still believes it holds the lock; fences stay safe all the same: the fence counter
 * is bumped atomically by the write that grants, so every grant carries a greater fence than every grant
 * before it, and a resource guarded by fences refuses the older holder's writes.
 *
 * <p><b>Item.</b> Key attribute {@code pk} (a string: {@code "k" + key}); {@code lockKey} (the key),
 * {@code fence} (the last fence issued), {@code lockId} and {@code expiresAt} (Unix milliseconds by the
 * client's clock; both absent when free), {@code acquiredAt}. A release removes the lock id and the expiry
 * and keeps the item, so the fence counter survives it.
 *
 * <p><b>Fences.</b> {@link FenceStrategy#DENSE}: {@code SET fence = if_not_exists(fence, 0) + 1} in the
 * granting write. {@link FenceStrategy#CLOCK_FLOORED}: the granting write sets {@code fence = floor + 1},
 * the floor of the client's clock, on the condition that the stored fence is below it, which is the
 * common case (a new item, or one last granted more than 10 µs ago by a clock that agrees); when the
 * stored fence is at or above the floor (a client clock behind another's), the condition fails and a
 * second write bumps the counter on the condition that it is still the value seen. A restore to an earlier
 * point in time rolls the counter back; the floor of a clock that did not go back with it keeps fences
 * above every fence issued before the restore point, as far as the clients' clocks agree
 * (docs/dynamodb.md).
 *
 * <p><b>One call, and the failed condition.</b> Each write asks DynamoDB for the item as it was when the
 * condition failed ({@code ReturnValuesOnConditionCheckFailure=ALL_OLD}); where the server sends no item
 * back (dynalite, some emulators), one strongly consistent {@code GetItem} follows. Only a refused
 * acquisition needs to know why (held, or the fences used up), and only on that path is the item read.
 *
 * <p><b>Asynchronous and bounded.</b> Every method returns at once; the SDK's asynchronous client sends
 * the request and completes the stage from its event loop. The {@code timeout} of a call is one deadline
 * for its chain of requests, run on fence-guard's timer thread. DynamoDB takes no deadline, so a request
 * sent before the timeout may answer after it: as {@link LockBackend} asks, the stage then completes with
 * that answer (the lock client releases a grant nobody waits for), and nothing more is sent after the
 * timeout. A request still unanswered 2 s after the timeout is cancelled (which aborts its HTTP exchange)
 * and the stage fails with {@code TIMEOUT}; such an operation may still have taken effect, and a grant it
 * made runs out at its TTL. The SDK's own retries (throttling, 5xx) happen inside that deadline.
 *
 * <p>Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class DynamoDbLockBackend implements LockBackend {

    static final String PK = "pk";
    static final String KEY = "lockKey";
    static final String FENCE = "fence";
    static final String LOCK_ID = "lockId";
    static final String EXPIRES = "expiresAt";
    static final String ACQUIRED = "acquiredAt";
    /** The key warm-ups read: lock items' keys start with {@code k}, so no lock key maps to it. */
    static final String WARM_UP_PK = "warm-up";

    private static final Map<String, String> NAMES = Map.of("#fence", FENCE, "#lockId", LOCK_ID, "#exp", EXPIRES,
            "#key", KEY, "#acq", ACQUIRED);
    /** Free: nobody's lease, or one whose expiry is the skew allowance behind the acquirer's now. */
    private static final String FREE = "(attribute_not_exists(#lockId) OR #exp <= :stale)";
    private static final String GRANT_SET = ", #lockId = :id, #exp = :exp, #key = :key, #acq = :now";
    private static final int ATTEMPTS = 8;

    private final DynamoDbAsyncClient client;
    private final String table;
    private final FenceStrategy strategy;
    private final Duration skew;
    private final TimeSource time;

    DynamoDbLockBackend(DynamoDbAsyncClient client, String table, FenceStrategy strategy, Duration skew, TimeSource time) {
        this.client = client;
        this.table = table;
        this.strategy = strategy;
        this.skew = skew;
        this.time = time;
    }

    @Override
    public String name() {
        return "dynamodb";
    }

    /**
     * The fence strategy in use ({@link FenceGuardDynamoDb.Builder#withFenceStrategy}).
     *
     * @since 0.1
     */
    public FenceStrategy fenceStrategy() {
        return strategy;
    }

    /**
     * The lock table's name.
     *
     * @since 0.1
     */
    public String table() {
        return table;
    }

    @Override
    public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        return Bounded.run(timeout, Bounded.LATE_ANSWERS, key.value(), "acquire", chain -> acquire(chain, key, lockId, ttl, ATTEMPTS));
    }

    private CompletionStage<Optional<Grant>> acquire(Bounded<Optional<Grant>> chain, LockKey key, LockId lockId, Duration ttl,
            int attemptsLeft) {
        long now = time.now().toEpochMilli();
        long expires = now + ttl.toMillis();
        Map<String, AttributeValue> values = grantValues(key, lockId, now, expires);
        UpdateItemRequest.Builder request = UpdateItemRequest.builder().tableName(table).key(pk(key))
                .expressionAttributeNames(NAMES).returnValues(ReturnValue.UPDATED_NEW)
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD);
        if (strategy == FenceStrategy.DENSE) {
            values.put(":zero", Attributes.n(0));
            values.put(":one", Attributes.n(1));
            values.put(":max", Attributes.n(FenceToken.MAX_VALUE));
            request.updateExpression("SET #fence = if_not_exists(#fence, :zero) + :one" + GRANT_SET)
                    .conditionExpression(FREE + " AND (attribute_not_exists(#fence) OR #fence < :max)");
        } else {
            // the tick after the one this acquisition started in (FenceStrategy.CLOCK_FLOORED, rule 2)
            long floored = ClockFloor.floorAtMicros(Math.multiplyExact(now, 1000L)) + 1;
            if (floored > FenceToken.MAX_VALUE) {
                throw exhausted(key, floored - 1);
            }
            values.put(":f", Attributes.n(floored));
            request.updateExpression("SET #fence = :f" + GRANT_SET)
                    .conditionExpression(FREE + " AND (attribute_not_exists(#fence) OR #fence < :f)");
        }
        UpdateItemRequest sent = request.expressionAttributeValues(values).build();
        return chain.send(() -> client.updateItem(sent)).handle((response, error) -> {
            if (error == null) {
                long fence = Long.parseLong(response.attributes().get(FENCE).n());
                return CompletableFuture.completedFuture(Optional.of(new Grant(fence, Instant.ofEpochMilli(expires))));
            }
            if (!DynamoDbErrors.isConditionFailed(error)) {
                return CompletableFuture.<Optional<Grant>>failedFuture(error);
            }
            return refused(chain, key, error).thenCompose(item -> {
                Optional<Grant> ours = ownGrant(item, lockId);
                if (ours.isPresent()) {
                    return CompletableFuture.completedFuture(ours);
                }
                if (isLive(item, now - skew.toMillis())) {
                    return CompletableFuture.completedFuture(Optional.<Grant>empty());
                }
                long last = Attributes.number(item, FENCE, 0);
                if (last >= FenceToken.MAX_VALUE) {
                    throw exhausted(key, last);
                }
                if (attemptsLeft <= 1) {
                    return CompletableFuture.completedFuture(Optional.<Grant>empty()); // others keep changing it: contended
                }
                if (strategy == FenceStrategy.CLOCK_FLOORED && item != null && last >= ClockFloor.floorAtMicros(now * 1000L) + 1) {
                    return bump(chain, key, lockId, ttl, last, attemptsLeft - 1);
                }
                return acquire(chain, key, lockId, ttl, attemptsLeft - 1); // changed since the condition failed
            });
        }).thenCompose(stage -> stage);
    }

    /** The values of {@link #GRANT_SET} and {@link #FREE}, read at {@code now}; a grant's request adds its fence's. */
    private Map<String, AttributeValue> grantValues(LockKey key, LockId lockId, long now, long expires) {
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":id", AttributeValue.fromS(lockId.value()));
        values.put(":exp", Attributes.n(expires));
        values.put(":key", AttributeValue.fromS(key.value()));
        values.put(":now", Attributes.n(now));
        values.put(":stale", Attributes.n(now - skew.toMillis()));
        return values;
    }

    /** CLOCK_FLOORED with a stored fence at or above this client's floor: {@code last + 1}, if it is still {@code last}. */
    private CompletionStage<Optional<Grant>> bump(Bounded<Optional<Grant>> chain, LockKey key, LockId lockId, Duration ttl, long last,
            int attemptsLeft) {
        long now = time.now().toEpochMilli();
        long expires = now + ttl.toMillis();
        Map<String, AttributeValue> values = grantValues(key, lockId, now, expires);
        values.put(":seen", Attributes.n(last));
        values.put(":next", Attributes.n(last + 1));
        UpdateItemRequest sent = UpdateItemRequest.builder().tableName(table).key(pk(key)).expressionAttributeNames(NAMES)
                .updateExpression("SET #fence = :next" + GRANT_SET).conditionExpression(FREE + " AND #fence = :seen")
                .expressionAttributeValues(values).returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                .build();
        return chain.send(() -> client.updateItem(sent)).handle((response, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(Optional.of(new Grant(last + 1, Instant.ofEpochMilli(expires))));
            }
            if (!DynamoDbErrors.isConditionFailed(error)) {
                return CompletableFuture.<Optional<Grant>>failedFuture(error);
            }
            return acquire(chain, key, lockId, ttl, attemptsLeft);
        }).thenCompose(stage -> stage);
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
        long now = time.now().toEpochMilli();
        UpdateItemRequest sent = UpdateItemRequest.builder().tableName(table).key(pk(key))
                .expressionAttributeNames(Map.of("#lockId", LOCK_ID, "#exp", EXPIRES))
                .updateExpression("REMOVE #lockId, #exp").conditionExpression("#lockId = :id AND #exp > :now")
                .expressionAttributeValues(Map.of(":id", AttributeValue.fromS(lockId.value()), ":now", Attributes.n(now)))
                .build();
        return Bounded.run(timeout, Bounded.LATE_ANSWERS, key.value(), "release", chain -> chain.send(() -> client.updateItem(sent))
                .handle((response, error) -> {
                    if (error == null) {
                        return true;
                    }
                    if (DynamoDbErrors.isConditionFailed(error)) {
                        return false;
                    }
                    throw DynamoDbErrors.failure(error, key.value(), "release");
                }));
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        long now = time.now().toEpochMilli();
        long expires = now + ttl.toMillis();
        UpdateItemRequest sent = UpdateItemRequest.builder().tableName(table).key(pk(key))
                .expressionAttributeNames(Map.of("#lockId", LOCK_ID, "#exp", EXPIRES))
                .updateExpression("SET #exp = :exp").conditionExpression("#lockId = :id AND #exp > :now")
                .expressionAttributeValues(Map.of(":id", AttributeValue.fromS(lockId.value()), ":now", Attributes.n(now),
                        ":exp", Attributes.n(expires)))
                .build();
        return Bounded.run(timeout, Bounded.LATE_ANSWERS, key.value(), "extend", chain -> chain.send(() -> client.updateItem(sent))
                .handle((response, error) -> {
                    if (error == null) {
                        return Optional.of(Instant.ofEpochMilli(expires));
                    }
                    if (DynamoDbErrors.isConditionFailed(error)) {
                        return Optional.<Instant>empty();
                    }
                    throw DynamoDbErrors.failure(error, key.value(), "extend");
                }));
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        return Bounded.run(timeout, Bounded.LATE_ANSWERS, key.value(), "lookup", chain -> read(chain, pk(key)).thenApply(item -> {
            long now = time.now().toEpochMilli();
            return isLive(item, now)
                    ? Optional.of(new LockInfo(key, FenceToken.of(Attributes.number(item, FENCE, 0)),
                            Instant.ofEpochMilli(Attributes.number(item, EXPIRES, 0))))
                    : Optional.empty();
        }));
    }

    /**
     * Gets ready for the first calls: a strongly consistent {@code GetItem} of the item {@code warm-up} in the
     * lock table (no lock key maps to it, and nothing writes it), five times, which opens the HTTP
     * connection, signs a request and loads the SDK's request and response paths. It takes no lock and
     * writes nothing.
     *
     * @since 0.1
     */
    @Override
    public CompletionStage<Void> warmUp(Duration timeout) {
        Map<String, AttributeValue> warmUp = Map.of(PK, AttributeValue.fromS(WARM_UP_PK));
        return Bounded.run(timeout, Bounded.LATE_ANSWERS, null, "warm-up", chain -> dev.fenceguard.core.internal.WarmUps.rounds(read(chain, warmUp),
                () -> read(chain, warmUp)));
    }

    private CompletableFuture<Map<String, AttributeValue>> read(Bounded<?> chain, Map<String, AttributeValue> key) {
        GetItemRequest get = GetItemRequest.builder().tableName(table).key(key).consistentRead(true).build();
        return chain.send(() -> client.getItem(get)).thenApply(r -> r.hasItem() && !r.item().isEmpty() ? r.item() : null);
    }

    /** The item as the failed condition saw it: sent with the failure by DynamoDB, else read (consistently). */
    private CompletableFuture<Map<String, AttributeValue>> refused(Bounded<?> chain, LockKey key, Throwable error) {
        ConditionalCheckFailedException failed = (ConditionalCheckFailedException) dev.fenceguard.core.internal.Stages.unwrap(error);
        if (failed.hasItem()) {
            return CompletableFuture.completedFuture(failed.item().isEmpty() ? null : failed.item());
        }
        return read(chain, pk(key));
    }

    /**
     * The grant this very acquisition made, if the item holds its lock id. The SDK resends a write whose answer
     * it lost (a connection reset after the request went out, a 5xx); when the first send had already taken the
     * lock, the resent one finds the lock held, by this lock id, and its condition fails. Lock ids are random per
     * acquisition, so the item is this acquisition's grant, not someone else's: reported as held, it would stay
     * taken, unknown to anyone, until its TTL ran out.
     */
    private static Optional<Grant> ownGrant(Map<String, AttributeValue> item, LockId lockId) {
        if (item == null || !lockId.value().equals(Attributes.text(item, LOCK_ID))) {
            return Optional.empty();
        }
        return Optional.of(new Grant(Attributes.number(item, FENCE, 0), Instant.ofEpochMilli(Attributes.number(item, EXPIRES, 0))));
    }

    /** A live lease: a lock id, and an expiry after {@code now}. */
    private static boolean isLive(Map<String, AttributeValue> item, long now) {
        return item != null && Attributes.text(item, LOCK_ID) != null && Attributes.number(item, EXPIRES, 0) > now;
    }

    private static FenceGuardException exhausted(LockKey key, long last) {
        return new FenceGuardException(ErrorCode.FENCE_EXHAUSTED, key.value(), "the key has issued its last fence "
                + last + "; no lock was taken");
    }

    static Map<String, AttributeValue> pk(LockKey key) {
        return Map.of(PK, AttributeValue.fromS("k" + key.value()));
    }

    @Override
    public String toString() {
        return "DynamoDbLockBackend[" + table + ", " + strategy + ", skew " + skew + "]";
    }
}
