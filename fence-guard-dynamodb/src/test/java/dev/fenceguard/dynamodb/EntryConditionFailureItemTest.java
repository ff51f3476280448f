package dev.fenceguard.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.FlightStore.FlightStart;
import dev.fenceguard.core.spi.IdempotencyEntry;
import dev.fenceguard.core.spi.IdempotencyState;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;

/**
 * {@link ConditionFailureItemTest} for the idempotency backend and the flight store: a refused claim, record, begin or
 * publish decided from the item DynamoDB sends back with the failure ({@code ALL_OLD}), in one request and with no
 * read. dynalite sends no item, so on it only the read after a refusal runs; this runs against {@link CannedDynamoDb}
 * with DynamoDB's documented error shape ({@code ConditionalCheckFailedException} carrying an {@code Item}), written
 * from the API reference, not recorded from AWS.
 */
class EntryConditionFailureItemTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final LockKey KEY = LockKey.of("orders:42");

    private final CannedDynamoDb server = CannedDynamoDb.open();
    private final DynamoDbAsyncClient client = server.client();
    private final FenceGuardDynamoDb dynamo = FenceGuardDynamoDb.builder(client).withMetrics(LockMetrics.none()).build();

    @AfterEach
    void close() throws Exception {
        server.close();
    }

    private static long future() {
        return System.currentTimeMillis() + 600_000;
    }

    private static String bytes(String text) {
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    private void oneRequest(String target) {
        assertThat(server.requests()).as("the write alone, no GetItem").extracting(CannedDynamoDb.Request::target)
                .containsExactly("DynamoDB_20120810." + target);
        assertThat(server.requests().get(0).body()).contains("\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"");
    }

    @Test
    void aRefusedIdempotencyClaimAnswersTheEntryThatStoppedItWithNoRead() {
        long until = future();
        server.answer(400, CannedDynamoDb.conditionFailed("{\"pk\":{\"S\":\"iorders:42\"},\"state\":{\"S\":\"C\"},\"fingerprint\":{\"S\":\"fp-1\"},"
                + "\"fence\":{\"N\":\"4\"},\"expiresAt\":{\"N\":\"" + until + "\"},\"retainUntil\":{\"N\":\"" + until + "\"},"
                + "\"result\":{\"B\":\"" + bytes("done") + "\"}}"));
        IdempotencyEntry entry = dynamo.idempotencyBackend().claim(KEY, "fp-1", 5, Duration.ofSeconds(30), Duration.ofMinutes(5), TIMEOUT)
                .toCompletableFuture().join();
        assertThat(entry.state()).isEqualTo(IdempotencyState.COMPLETED);
        assertThat(entry.fence()).isEqualTo(4);
        assertThat(new String(entry.result(), StandardCharsets.UTF_8)).isEqualTo("done");
        oneRequest("PutItem");
    }

    @Test
    void aRefusedIdempotencyRecordAnswersTheFenceThatHoldsTheEntryWithNoRead() {
        long until = future();
        server.answer(400, CannedDynamoDb.conditionFailed("{\"pk\":{\"S\":\"iorders:42\"},\"state\":{\"S\":\"P\"},\"fingerprint\":{\"S\":\"fp-1\"},"
                + "\"fence\":{\"N\":\"9\"},\"expiresAt\":{\"N\":\"" + until + "\"},\"retainUntil\":{\"N\":\"" + until + "\"}}"));
        OptionalLong holder = dynamo.idempotencyBackend().record(KEY, 5, IdempotencyState.COMPLETED, new byte[] {1}, Duration.ofMinutes(5),
                TIMEOUT).toCompletableFuture().join();
        assertThat(holder).hasValue(9);
        oneRequest("UpdateItem");
    }

    @Test
    void aRefusedFlightBeginIsRetainedOrSupersededFromTheItemSentBackWithNoRead() {
        server.answer(400, CannedDynamoDb.conditionFailed("{\"pk\":{\"S\":\"forders:42\"},\"flightFence\":{\"N\":\"3\"},\"result\":{\"B\":\"" + bytes("r") + "\"},"
                + "\"resultFence\":{\"N\":\"3\"},\"resultExpiresAt\":{\"N\":\"" + future() + "\"},\"version\":{\"N\":\"1\"}}"));
        FlightStart retained = dynamo.flightStore().begin(KEY, 4, TIMEOUT).toCompletableFuture().join();
        assertThat(retained).isInstanceOfSatisfying(FlightStart.Retained.class, r -> {
            assertThat(r.result().fence()).isEqualTo(3);
            assertThat(new String(r.result().value(), StandardCharsets.UTF_8)).isEqualTo("r");
        });
        oneRequest("UpdateItem");

        server.answer(400, CannedDynamoDb.conditionFailed("{\"pk\":{\"S\":\"forders:42\"},\"flightFence\":{\"N\":\"8\"}}"));
        assertThat(dynamo.flightStore().begin(KEY, 4, TIMEOUT).toCompletableFuture().join()).isEqualTo(new FlightStart.Superseded(8));
        assertThat(server.requests()).hasSize(2);
    }

    @Test
    void aRefusedFlightPublishIsStaleAgainstTheNewestFlightWithNoRead() {
        server.answer(400, CannedDynamoDb.conditionFailed("{\"pk\":{\"S\":\"forders:42\"},\"flightFence\":{\"N\":\"8\"}}"));
        WriteOutcome outcome = dynamo.flightStore().publish(KEY, 4, new byte[] {1}, Duration.ofMinutes(1), TIMEOUT).toCompletableFuture().join();
        assertThat(outcome).isEqualTo(new WriteOutcome.Stale(dynamo.lockBackend().table() + "[pk=forders:42]", 4, 8, FencePolicy.SAME_OR_NEWER));
        oneRequest("UpdateItem");
    }
}
