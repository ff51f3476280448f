package dev.fenceguard.dynamodb;

import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.internal.Stages;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyEntry;
import dev.fenceguard.core.spi.IdempotencyRules;
import dev.fenceguard.core.spi.IdempotencyState;
import dev.fenceguard.dynamodb.internal.Attributes;
import dev.fenceguard.dynamodb.internal.Bounded;
import dev.fenceguard.dynamodb.internal.DynamoDbErrors;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The idempotency backend on DynamoDB: one item per key in the lock table ({@code pk = "i" + key}, beside
 * the lock items' {@code "k" + key}, so the two never meet), each step of {@link IdempotencyRules} one
 * conditional write: a claim is a {@code PutItem} of the fresh entry conditioned on the rule's cases, a
 * record an {@code UpdateItem} conditioned on the holder's claim; a refused one learns the entry that
 * stopped it from the failure ({@code ALL_OLD}) or, where the server sends none, from one consistent read.
 * Get it from {@link FenceGuardDynamoDb#idempotencyBackend()} and wrap it in an
 * {@link dev.fenceguard.core.idempotency.IdempotencyStore}.
 *
 * <p>Time is the client's clock, as for the locks ({@link DynamoDbLockBackend}). Entries past their
 * retention count as absent; {@link #purge} deletes nothing: each entry carries its retention end as
 * {@code ttl} (Unix seconds), for DynamoDB's TTL to remove when it gets to it (turn TTL on for the
 * attribute {@code ttl} of the lock table; lock items never carry it).
 *
 * <p>Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class DynamoDbIdempotencyBackend implements IdempotencyBackend {

    private static final Map<String, String> NAMES = Map.of("#pk", DynamoDbLockBackend.PK, "#st", "state", "#fp", "fingerprint",
            "#fence", "fence", "#exp", "expiresAt", "#ret", "retainUntil");
    private static final String CLAIMABLE = "attribute_not_exists(#pk) OR #ret <= :now OR (#fp = :fp AND ((#st = :R AND #fence <= :fence)"
            + " OR (#st = :P AND (#fence = :fence OR (#fence < :fence AND #exp <= :now)))))";
    private static final int ATTEMPTS = 8;

    private final DynamoDbAsyncClient client;
    private final String table;
    private final TimeSource time;

    DynamoDbIdempotencyBackend(DynamoDbAsyncClient client, String table, TimeSource time) {
        this.client = client;
        this.table = table;
        this.time = time;
    }

    @Override
    public String name() {
        return "dynamodb";
    }

    @Override
    public CompletionStage<IdempotencyEntry> claim(LockKey key, String fingerprint, long fence, Duration ttl, Duration retention,
            Duration timeout) {
        return Bounded.run(timeout, key.value(), "idempotency claim", chain -> claim(chain, key, fingerprint, fence, ttl, retention, ATTEMPTS));
    }

    private CompletionStage<IdempotencyEntry> claim(Bounded<IdempotencyEntry> chain, LockKey key, String fingerprint, long fence,
            Duration ttl, Duration retention, int attemptsLeft) {
        Instant now = now();
        IdempotencyEntry fresh = IdempotencyRules.claim(Optional.empty(), fingerprint, fence, ttl, retention, now);
        Map<String, AttributeValue> item = new HashMap<>(pk(key));
        item.put("state", AttributeValue.fromS(code(IdempotencyState.IN_PROGRESS)));
        item.put("fingerprint", AttributeValue.fromS(fingerprint));
        item.put("fence", Attributes.n(fence));
        item.put("expiresAt", Attributes.n(fresh.expiresAt().toEpochMilli()));
        item.put("retainUntil", Attributes.n(fresh.retainUntil().toEpochMilli()));
        item.put("ttl", Attributes.n(Math.ceilDiv(fresh.retainUntil().toEpochMilli(), 1000L)));
        Map<String, AttributeValue> values = Map.of(":now", Attributes.n(now.toEpochMilli()), ":fp", AttributeValue.fromS(fingerprint),
                ":fence", Attributes.n(fence), ":R", AttributeValue.fromS(code(IdempotencyState.FAILED_RETRYABLE)),
                ":P", AttributeValue.fromS(code(IdempotencyState.IN_PROGRESS)));
        PutItemRequest put = PutItemRequest.builder().tableName(table).item(item).conditionExpression(CLAIMABLE)
                .expressionAttributeNames(NAMES).expressionAttributeValues(values)
                .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD).build();
        return chain.send(() -> client.putItem(put)).handle((done, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(fresh);
            }
            if (!DynamoDbErrors.isConditionFailed(error)) {
                return CompletableFuture.<IdempotencyEntry>failedFuture(error);
            }
            return refused(chain, key, error).thenCompose(seen -> {
                Optional<IdempotencyEntry> current = seen.filter(e -> now.isBefore(e.retainUntil()));
                if (current.isPresent() && IdempotencyRules.claim(current, fingerprint, fence, ttl, retention, now) == current.get()) {
                    return CompletableFuture.completedFuture(current.get()); // what stopped the claim
                }
                if (attemptsLeft <= 1) {
                    throw new dev.fenceguard.core.FenceGuardException(dev.fenceguard.core.ErrorCode.UNAVAILABLE, key.value(),
                            "idempotency claim lost " + ATTEMPTS + " races to other writers of the entry");
                }
                return claim(chain, key, fingerprint, fence, ttl, retention, attemptsLeft - 1); // changed since
            });
        }).thenCompose(stage -> stage);
    }

    @Override
    public CompletionStage<OptionalLong> record(LockKey key, long fence, IdempotencyState state, byte[] result, Duration retention,
            Duration timeout) {
        Instant now = now();
        long retainUntil = now.plus(retention).toEpochMilli();
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":now", Attributes.n(now.toEpochMilli()));
        values.put(":fence", Attributes.n(fence));
        values.put(":P", AttributeValue.fromS(code(IdempotencyState.IN_PROGRESS)));
        values.put(":st", AttributeValue.fromS(code(state)));
        values.put(":ret", Attributes.n(retainUntil));
        values.put(":ttl", Attributes.n(Math.ceilDiv(retainUntil, 1000L)));
        String update = "SET #st = :st, #exp = :now, #ret = :ret, #ttl = :ttl";
        Map<String, String> names = new HashMap<>(NAMES);
        names.remove("#pk");
        names.remove("#fp");
        names.put("#ttl", "ttl");
        names.put("#res", "result");
        if (result.length > 0) {
            values.put(":res", AttributeValue.fromB(SdkBytes.fromByteArray(result)));
            update += ", #res = :res";
        } else {
            update += " REMOVE #res";
        }
        UpdateItemRequest write = UpdateItemRequest.builder().tableName(table).key(pk(key)).updateExpression(update)
                .conditionExpression("#ret > :now AND #st = :P AND #fence = :fence").expressionAttributeNames(names)
                .expressionAttributeValues(values).returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
                .build();
        return Bounded.run(timeout, key.value(), "idempotency record", chain -> chain.send(() -> client.updateItem(write))
                .handle((done, error) -> {
                    if (error == null) {
                        return CompletableFuture.completedFuture(OptionalLong.empty());
                    }
                    if (!DynamoDbErrors.isConditionFailed(error)) {
                        return CompletableFuture.<OptionalLong>failedFuture(error);
                    }
                    return refused(chain, key, error).thenApply(seen -> OptionalLong.of(IdempotencyRules.currentFence(seen, now)));
                }).thenCompose(stage -> stage));
    }

    @Override
    public CompletionStage<Optional<IdempotencyEntry>> lookup(LockKey key, Duration timeout) {
        return Bounded.run(timeout, key.value(), "idempotency lookup", chain -> read(chain, key)
                .thenApply(seen -> seen.filter(e -> now().isBefore(e.retainUntil()))));
    }

    /** Deletes nothing and answers 0: entries past their retention count as absent, and DynamoDB's TTL removes them. */
    @Override
    public CompletionStage<Integer> purge(int limit, Duration timeout) {
        return CompletableFuture.completedFuture(0);
    }

    private CompletionStage<Optional<IdempotencyEntry>> refused(Bounded<?> chain, LockKey key, Throwable error) {
        ConditionalCheckFailedException failed = (ConditionalCheckFailedException) Stages.unwrap(error);
        if (failed.hasItem() && !failed.item().isEmpty()) {
            return CompletableFuture.completedFuture(Optional.of(entry(failed.item())));
        }
        return read(chain, key);
    }

    private CompletableFuture<Optional<IdempotencyEntry>> read(Bounded<?> chain, LockKey key) {
        GetItemRequest get = GetItemRequest.builder().tableName(table).key(pk(key)).consistentRead(true).build();
        return chain.send(() -> client.getItem(get)).thenApply(r -> r.hasItem() && !r.item().isEmpty()
                ? Optional.of(entry(r.item())) : Optional.empty());
    }

    /** The client's now in whole milliseconds, as the items store times. */
    private Instant now() {
        return time.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
    }

    private static IdempotencyEntry entry(Map<String, AttributeValue> item) {
        AttributeValue result = item.get("result");
        return new IdempotencyEntry(state(Attributes.text(item, "state")), Attributes.text(item, "fingerprint"),
                Attributes.number(item, "fence", 0), Instant.ofEpochMilli(Attributes.number(item, "expiresAt", 0)),
                Instant.ofEpochMilli(Attributes.number(item, "retainUntil", 0)),
                result == null || result.b() == null ? new byte[0] : result.b().asByteArray());
    }

    private static String code(IdempotencyState state) {
        return Character.toString(state.code());
    }

    private static IdempotencyState state(String code) {
        for (IdempotencyState s : IdempotencyState.values()) {
            if (code != null && code.length() == 1 && s.code() == code.charAt(0)) {
                return s;
            }
        }
        throw new IllegalStateException("unknown idempotency state '" + code + "'");
    }

    static Map<String, AttributeValue> pk(LockKey key) {
        return Map.of(DynamoDbLockBackend.PK, AttributeValue.fromS("i" + key.value()));
    }

    @Override
    public String toString() {
        return "DynamoDbIdempotencyBackend[" + table + "]";
    }
}
