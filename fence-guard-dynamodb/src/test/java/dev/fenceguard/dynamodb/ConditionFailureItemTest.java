package dev.fenceguard.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.Grant;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.assertj.core.api.Assertions;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * The path only real DynamoDB serves and dynalite does not: the item a failed condition saw, sent back with
 * the failure ({@code ReturnValuesOnConditionCheckFailure=ALL_OLD}), which saves the read that follows a
 * refusal on dynalite. Run against {@link CannedDynamoDb}, answering with DynamoDB's documented error shape
 * ({@code __type} ConditionalCheckFailedException with an {@code Item}); each test shows that exactly one
 * request was sent and what it asked for.
 */
class ConditionFailureItemTest {

    private final CannedDynamoDb server = CannedDynamoDb.open();
    private final DynamoDbAsyncClient client = server.client();
    private final FenceGuardDynamoDb dynamo = FenceGuardDynamoDb.builder(client).withMetrics(LockMetrics.none()).build();

    @AfterEach
    void close() throws Exception {
        server.close();
    }

    @Test
    void aRefusedUpdateIsStaleWithTheFenceOfTheItemSentBackAndNoRead() {
        server.answer(400, CannedDynamoDb.conditionFailed("{\"id\":{\"S\":\"42\"},\"_fence\":{\"N\":\"9\"},\"status\":{\"S\":\"paid\"}}"));
        WriteOutcome outcome = dynamo.fencedWrites().update(ItemKey.of("orders", "id", "42"), FenceToken.of(7), Map.of("status", "late"));
        assertThat(outcome).isEqualTo(new WriteOutcome.Stale("orders[id=42]", 7, 9, dev.fenceguard.core.FencePolicy.SAME_OR_NEWER));
        assertThat(server.requests()).as("one UpdateItem, no GetItem").extracting(CannedDynamoDb.Request::target)
                .containsExactly("DynamoDB_20120810.UpdateItem");
        assertThat(server.requests().get(0).body()).contains("\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"")
                .contains("attribute_exists(#k) AND attribute_not_exists(#d) AND (attribute_not_exists(#f) OR #f <= :f)");
    }

    @Test
    void aRefusedUpdateOfATombstoneTheFenceWouldPassIsNotFoundWithNoRead() {
        server.answer(400, CannedDynamoDb.conditionFailed("{\"id\":{\"S\":\"42\"},\"_fence\":{\"N\":\"3\"},\"_deleted\":{\"BOOL\":true}}"));
        WriteOutcome outcome = dynamo.fencedWrites().update(ItemKey.of("orders", "id", "42"), FenceToken.of(7), Map.of("status", "late"));
        assertThat(outcome).isEqualTo(new WriteOutcome.NotFound("orders[id=42]"));
        assertThat(server.requests()).hasSize(1);
    }

    @Test
    void aRefusedPutAndDeleteUnderStrictlyNewerAreStaleWithNoRead() {
        server.answer(400, CannedDynamoDb.conditionFailed("{\"id\":{\"S\":\"42\"},\"_fence\":{\"N\":\"7\"}}"));
        server.answer(400, CannedDynamoDb.conditionFailed("{\"id\":{\"S\":\"42\"},\"_fence\":{\"N\":\"7\"}}"));
        var strict = dynamo.fencedWrites(dev.fenceguard.core.FencePolicy.STRICTLY_NEWER);
        assertThat(strict.put(ItemKey.of("orders", "id", "42"), FenceToken.of(7), Map.of("status", "x")).isApplied()).isFalse();
        assertThat(strict.delete(ItemKey.of("orders", "id", "42"), FenceToken.of(7))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(server.requests()).extracting(CannedDynamoDb.Request::target)
                .containsExactly("DynamoDB_20120810.PutItem", "DynamoDB_20120810.PutItem");
        assertThat(server.requests().get(0).body()).contains("(attribute_not_exists(#f) OR #f < :f)");
    }

    @Test
    void aRefusedAcquisitionOfAHeldKeyIsEmptyWithNoRead() {
        long future = System.currentTimeMillis() + 60_000;
        server.answer(400, CannedDynamoDb.conditionFailed("{\"pk\":{\"S\":\"korders:42\"},\"fence\":{\"N\":\"5\"},\"lockId\":{\"S\":\"someone\"},"
                + "\"expiresAt\":{\"N\":\"" + future + "\"}}"));
        Optional<?> grant = dynamo.lockBackend().tryAcquire(LockKey.of("orders:42"), LockId.random(), Duration.ofSeconds(10),
                Duration.ofSeconds(10)).toCompletableFuture().join();
        assertThat(grant).isEmpty();
        assertThat(server.requests()).extracting(CannedDynamoDb.Request::target).containsExactly("DynamoDB_20120810.UpdateItem");
    }

    /**
     * The SDK resends a write whose answer it lost (here: a 500, which it retries); the first send had taken the
     * lock, so the resent one fails its condition on the acquisition's own lock id. That is this acquisition's
     * grant, with the fence and expiry the item holds, not a key held by someone else (which would leave the lock
     * taken, unknown to anyone, for its TTL).
     */
    @Test
    void aResentAcquisitionThatFindsItsOwnLockIdHasItsGrant() {
        LockId mine = LockId.random();
        long expires = System.currentTimeMillis() + 10_000;
        server.answer(500, "{\"__type\":\"com.amazonaws.dynamodb.v20120810#InternalServerError\",\"message\":\"lost\"}");
        server.answer(400, CannedDynamoDb.conditionFailed("{\"pk\":{\"S\":\"korders:42\"},\"fence\":{\"N\":\"8\"},\"lockId\":{\"S\":\"" + mine.value()
                + "\"},\"expiresAt\":{\"N\":\"" + expires + "\"}}"));
        Optional<Grant> grant = dynamo.lockBackend().tryAcquire(LockKey.of("orders:42"), mine, Duration.ofSeconds(10),
                Duration.ofSeconds(10)).toCompletableFuture().join();
        assertThat(grant).contains(new Grant(8, java.time.Instant.ofEpochMilli(expires)));
        assertThat(server.requests()).as("the SDK's resend, and no read").extracting(CannedDynamoDb.Request::target)
                .containsExactly("DynamoDB_20120810.UpdateItem", "DynamoDB_20120810.UpdateItem");
    }

    /** The same where the failed condition sends no item back (dynalite): the read after it finds the own lock id. */
    @Test
    void aResentAcquisitionThatReadsItsOwnLockIdHasItsGrant() {
        LockId mine = LockId.random();
        long expires = System.currentTimeMillis() + 10_000;
        server.answer(500, "{\"__type\":\"com.amazonaws.dynamodb.v20120810#InternalServerError\",\"message\":\"lost\"}");
        server.answer(400, "{\"__type\":\"" + CannedDynamoDb.CONDITION_FAILED + "\",\"message\":\"The conditional request failed\"}");
        server.answer(200, "{\"Item\":{\"pk\":{\"S\":\"korders:42\"},\"fence\":{\"N\":\"8\"},\"lockId\":{\"S\":\"" + mine.value()
                + "\"},\"expiresAt\":{\"N\":\"" + expires + "\"}}}");
        Optional<Grant> grant = dynamo.lockBackend().tryAcquire(LockKey.of("orders:42"), mine, Duration.ofSeconds(10),
                Duration.ofSeconds(10)).toCompletableFuture().join();
        assertThat(grant).contains(new Grant(8, java.time.Instant.ofEpochMilli(expires)));
        assertThat(server.requests()).extracting(CannedDynamoDb.Request::target)
                .containsExactly("DynamoDB_20120810.UpdateItem", "DynamoDB_20120810.UpdateItem", "DynamoDB_20120810.GetItem");
    }

    @Test
    void aRefusedAcquisitionOfAFreeKeyWhoseFencesAreUsedUpIsFenceExhaustedWithNoRead() {
        server.answer(400, CannedDynamoDb.conditionFailed("{\"pk\":{\"S\":\"korders:42\"},\"fence\":{\"N\":\"" + FenceToken.MAX_VALUE + "\"}}"));
        var stage = dynamo.lockBackend().tryAcquire(LockKey.of("orders:42"), LockId.random(), Duration.ofSeconds(10),
                Duration.ofSeconds(10)).toCompletableFuture();
        Assertions.assertThatThrownBy(stage::join).hasCauseInstanceOf(FenceGuardException.class)
                .cause().satisfies(e -> assertThat(((FenceGuardException) e).code()).isEqualTo(ErrorCode.FENCE_EXHAUSTED));
        assertThat(server.requests()).hasSize(1);
    }
}
