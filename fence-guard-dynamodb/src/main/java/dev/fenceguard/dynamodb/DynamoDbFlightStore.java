package dev.fenceguard.dynamodb;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.FlightWatchers;
import dev.fenceguard.core.internal.Stages;
import dev.fenceguard.core.internal.Timer;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.dynamodb.internal.Attributes;
import dev.fenceguard.dynamodb.internal.Bounded;
import dev.fenceguard.dynamodb.internal.DynamoDbErrors;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The {@link FlightStore} of {@link dev.fenceguard.core.singleflight.Singleflight} on DynamoDB: one item
 * per flight key in the lock table ({@code pk = "f" + key}), each operation one conditional
 * {@code UpdateItem} (a read is one consistent {@code GetItem}); retention is judged by the client's clock,
 * as the locks' expiry. Get it from {@link FenceGuardDynamoDb#flightStore()}.
 *
 * <p><b>Item.</b> {@code flightFence} (the newest flight begun; kept, so a zombie is refused after the
 * result expired), {@code result} (bytes), {@code resultFence}, {@code resultExpiresAt} (Unix ms), and
 * {@code version}, a counter every publish and wake bumps. A result must fit DynamoDB's 400 KB per item.
 *
 * <p><b>Notification.</b> DynamoDB has nothing to listen to (Streams aside, which need a consumer of their
 * own), so the store watches for its waiters: while a key has watchers in this process, it reads the
 * key's item every 100 ms and tells them when {@code version} moved. A watch is in place once its first
 * read has answered. One read per watched key per interval, whatever the number of waiters.
 *
 * <p>Immutable settings, thread-safe.
 *
 * @since 0.1
 */
public final class DynamoDbFlightStore implements FlightStore {

    static final Duration WATCH_INTERVAL = Duration.ofMillis(100);
    private static final Duration WATCH_READ_TIMEOUT = Duration.ofSeconds(10);

    private final DynamoDbAsyncClient client;
    private final String table;
    private final TimeSource time;
    private final FlightWatchers watchers = new FlightWatchers();
    /** The last version seen of each watched key, and whether its poll runs. */
    private final Map<String, long[]> versions = new ConcurrentHashMap<>();

    DynamoDbFlightStore(DynamoDbAsyncClient client, String table, TimeSource time) {
        this.client = client;
        this.table = table;
        this.time = time;
    }

    @Override
    public String name() {
        return "dynamodb";
    }

    @Override
    public CompletionStage<Optional<FlightResult>> read(LockKey key, Duration timeout) {
        return Bounded.run(timeout, key.value(), "singleflight read", chain -> get(chain, key).thenApply(this::retained));
    }

    @Override
    public CompletionStage<FlightStart> begin(LockKey key, long fence, Duration timeout) {
        long now = time.now().toEpochMilli();
        UpdateItemRequest write = UpdateItemRequest.builder().tableName(table).key(pk(key))
                .updateExpression("SET #ff = :fence REMOVE #res, #rf, #rx")
                .conditionExpression("(attribute_not_exists(#ff) OR #ff <= :fence) AND (attribute_not_exists(#rx) OR #rx <= :now)")
                .expressionAttributeNames(Map.of("#ff", "flightFence", "#res", "result", "#rf", "resultFence", "#rx", "resultExpiresAt"))
                .expressionAttributeValues(Map.of(":fence", Attributes.n(fence), ":now", Attributes.n(now)))
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD).build();
        return Bounded.run(timeout, key.value(), "singleflight begin", chain -> attemptBegin(chain, key, fence, write, 8));
    }

    private CompletionStage<FlightStart> attemptBegin(Bounded<FlightStart> chain, LockKey key, long fence, UpdateItemRequest write,
            int attemptsLeft) {
        return chain.send(() -> client.updateItem(write)).handle((done, error) -> {
            if (error == null) {
                return CompletableFuture.<FlightStart>completedFuture(new FlightStart.Started());
            }
            if (!DynamoDbErrors.isConditionFailed(error)) {
                return CompletableFuture.<FlightStart>failedFuture(error);
            }
            return refused(chain, key, error).thenCompose(seen -> {
                Optional<FlightResult> kept = retained(seen);
                if (kept.isPresent()) {
                    return CompletableFuture.<FlightStart>completedFuture(new FlightStart.Retained(kept.get()));
                }
                long newest = Attributes.number(seen, "flightFence", 0);
                if (newest > fence) {
                    return CompletableFuture.<FlightStart>completedFuture(new FlightStart.Superseded(newest));
                }
                if (attemptsLeft <= 1) {
                    throw new dev.fenceguard.core.FenceGuardException(dev.fenceguard.core.ErrorCode.UNAVAILABLE, key.value(),
                            "singleflight begin lost its races to other writers of the flight");
                }
                return attemptBegin(chain, key, fence, write, attemptsLeft - 1); // the result expired since, or changed
            });
        }).thenCompose(stage -> stage);
    }

    @Override
    public CompletionStage<WriteOutcome> publish(LockKey key, long fence, byte[] result, Duration retention, Duration timeout) {
        long now = time.now().toEpochMilli();
        String resource = table + "[" + DynamoDbLockBackend.PK + "=f" + key.value() + "]";
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":fence", Attributes.n(fence));
        values.put(":res", AttributeValue.fromB(SdkBytes.fromByteArray(result)));
        values.put(":rx", Attributes.n(now + retention.toMillis()));
        values.put(":zero", Attributes.n(0));
        values.put(":one", Attributes.n(1));
        UpdateItemRequest write = UpdateItemRequest.builder().tableName(table).key(pk(key))
                .updateExpression("SET #ff = :fence, #res = :res, #rf = :fence, #rx = :rx, #v = if_not_exists(#v, :zero) + :one")
                .conditionExpression("attribute_not_exists(#ff) OR #ff <= :fence")
                .expressionAttributeNames(Map.of("#ff", "flightFence", "#res", "result", "#rf", "resultFence", "#rx", "resultExpiresAt",
                        "#v", "version"))
                .expressionAttributeValues(values).returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                .build();
        return Bounded.run(timeout, key.value(), "singleflight publish", chain -> chain.send(() -> client.updateItem(write))
                .handle((done, error) -> {
                    if (error == null) {
                        return CompletableFuture.<WriteOutcome>completedFuture(new WriteOutcome.Applied(resource, fence));
                    }
                    if (!DynamoDbErrors.isConditionFailed(error)) {
                        return CompletableFuture.<WriteOutcome>failedFuture(error);
                    }
                    return refused(chain, key, error).thenApply(seen -> (WriteOutcome) new WriteOutcome.Stale(resource, fence,
                            Attributes.number(seen, "flightFence", 0), FencePolicy.SAME_OR_NEWER));
                }).thenCompose(stage -> stage));
    }

    @Override
    public CompletionStage<Void> wake(LockKey key, Duration timeout) {
        UpdateItemRequest write = UpdateItemRequest.builder().tableName(table).key(pk(key))
                .updateExpression("SET #v = if_not_exists(#v, :zero) + :one").expressionAttributeNames(Map.of("#v", "version"))
                .expressionAttributeValues(Map.of(":zero", Attributes.n(0), ":one", Attributes.n(1))).build();
        return Bounded.run(timeout, key.value(), "singleflight wake", chain -> chain.send(() -> client.updateItem(write))
                .thenApply(done -> (Void) null));
    }

    @Override
    public CompletionStage<FlightWatch> watch(LockKey key, Runnable onChange) {
        Objects.requireNonNull(onChange, "onChange");
        String k = key.value();
        CompletableFuture<FlightWatch> ready = new CompletableFuture<>();
        // the first read sets the version from which changes count; the watch is in place once it answered
        Bounded.<Map<String, AttributeValue>>run(WATCH_READ_TIMEOUT, k, "singleflight watch", chain -> get(chain, key))
                .whenComplete((item, error) -> {
                    if (error != null) {
                        ready.completeExceptionally(error);
                        return;
                    }
                    FlightWatch watch = watchers.add(k, onChange);
                    boolean start = versions.putIfAbsent(k, new long[] {Attributes.number(item, "version", 0)}) == null;
                    if (start) {
                        Timer.schedule(WATCH_INTERVAL, () -> poll(key));
                    }
                    ready.complete(watch);
                });
        return ready;
    }

    /** One look at a watched key: tell its watchers if its version moved; again after the interval while it has watchers. */
    private void poll(LockKey key) {
        String k = key.value();
        if (watchers.count(k) == 0) {
            versions.remove(k);
            if (watchers.count(k) > 0 && versions.putIfAbsent(k, new long[] {-1}) == null) {
                Timer.schedule(WATCH_INTERVAL, () -> poll(key)); // a watch came in as this one ended
            }
            return;
        }
        Bounded.<Map<String, AttributeValue>>run(WATCH_READ_TIMEOUT, k, "singleflight watch", chain -> get(chain, key))
                .whenComplete((item, error) -> {
                    long[] seen = versions.get(k);
                    if (error != null) {
                        watchers.tell(k); // cannot look: let the waiters look themselves
                    } else if (seen != null) {
                        long now = Attributes.number(item, "version", 0);
                        if (now != seen[0]) {
                            seen[0] = now;
                            watchers.tell(k);
                        }
                    }
                    Timer.schedule(WATCH_INTERVAL, () -> poll(key));
                });
    }

    private CompletableFuture<Map<String, AttributeValue>> get(Bounded<?> chain, LockKey key) {
        GetItemRequest get = GetItemRequest.builder().tableName(table).key(pk(key)).consistentRead(true).build();
        return chain.send(() -> client.getItem(get)).thenApply(r -> r.hasItem() && !r.item().isEmpty() ? r.item() : null);
    }

    private CompletionStage<Map<String, AttributeValue>> refused(Bounded<?> chain, LockKey key, Throwable error) {
        ConditionalCheckFailedException failed = (ConditionalCheckFailedException) Stages.unwrap(error);
        if (failed.hasItem() && !failed.item().isEmpty()) {
            return CompletableFuture.completedFuture(failed.item());
        }
        return get(chain, key);
    }

    private Optional<FlightResult> retained(Map<String, AttributeValue> item) {
        if (item == null || !item.containsKey("result") || !item.containsKey("resultExpiresAt")) {
            return Optional.empty();
        }
        if (time.now().toEpochMilli() >= Attributes.number(item, "resultExpiresAt", 0)) {
            return Optional.empty();
        }
        return Optional.of(new FlightResult(Attributes.number(item, "resultFence", 0), item.get("result").b().asByteArray()));
    }

    static Map<String, AttributeValue> pk(LockKey key) {
        return Map.of(DynamoDbLockBackend.PK, AttributeValue.fromS("f" + key.value()));
    }

    @Override
    public String toString() {
        return "DynamoDbFlightStore[" + table + "]";
    }
}
