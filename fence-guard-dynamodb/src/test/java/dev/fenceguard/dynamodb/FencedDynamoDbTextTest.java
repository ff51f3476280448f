package dev.fenceguard.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.servers.TestDynamoDb;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * {@link FenceEncoding#TEXT} on the test DynamoDB: fences stored as the 15-digit text form and compared by DynamoDB
 * as text, which orders like the numbers only because every fence has the same width; and an item whose fence is of
 * the other type, which no condition can ever pass, is an error that says so rather than a refusal or a retry loop.
 */
class FencedDynamoDbTextTest {

    private static final AtomicInteger SENT = new AtomicInteger();
    private static final DynamoDbAsyncClient CLIENT = Dynamo.client(TestDynamoDb.server().endpoint(), SENT);
    private static final String TABLE = Dynamo.newResourceTable(CLIENT, "fenced-text");
    private static final FenceGuardDynamoDb.Builder BUILDER = Dynamo.withNewLockTable(CLIENT, "fenced-text-locks")
            .withMetrics(LockMetrics.none());
    private static final FencedDynamoDb TEXT = BUILDER.withEncoding(FenceEncoding.TEXT).build().fencedWrites();
    private static final FencedDynamoDb INTEGER = BUILDER.withEncoding(FenceEncoding.INTEGER).build().fencedWrites();

    private static ItemKey fresh() {
        return ItemKey.of(TABLE, "id", UUID.randomUUID().toString());
    }

    private static Map<String, AttributeValue> read(ItemKey item) {
        var got = CLIENT.getItem(b -> b.tableName(TABLE).key(item.key()).consistentRead(true)).join();
        return got.hasItem() && !got.item().isEmpty() ? got.item() : null;
    }

    private static AttributeValue text(long fence) {
        return AttributeValue.fromS(FenceToken.of(fence).toString());
    }

    @Test
    void fencesAreStoredAsFifteenDigitTextAndCompareAcrossDigitCountBoundaries() {
        ItemKey item = fresh();
        assertThat(TEXT.put(item, FenceToken.of(9), Map.of("status", "new")).isApplied()).isTrue();
        assertThat(read(item)).containsEntry("_fence", AttributeValue.fromS("000000000000009"));
        // "10" < "9" as unpadded text: the padding is what makes 10 pass over 9 and 9 fail under 10
        assertThat(TEXT.update(item, FenceToken.of(10), Map.of("status", "paid")).isApplied()).isTrue();
        assertThat(read(item)).containsEntry("_fence", text(10)).containsEntry("status", AttributeValue.fromS("paid"));
        assertThat(TEXT.update(item, FenceToken.of(9), Map.of("status", "zombie")))
                .isEqualTo(new WriteOutcome.Stale(item.toString(), 9, 10, FencePolicy.SAME_OR_NEWER));
        assertThat(TEXT.claim(item, FenceToken.of(100)).isApplied()).isTrue();
        assertThat(TEXT.put(item, FenceToken.of(99), Map.of("status", "zombie")))
                .isEqualTo(new WriteOutcome.Stale(item.toString(), 99, 100, FencePolicy.SAME_OR_NEWER));
        assertThat(TEXT.delete(item, FenceToken.of(99))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(TEXT.delete(item, FenceToken.of(1_000))).isEqualTo(new WriteOutcome.Applied(item.toString(), 1_000));
        assertThat(read(item)).containsEntry("_fence", AttributeValue.fromS("000000000001000")).containsEntry("_deleted",
                AttributeValue.fromBool(true)).doesNotContainKey("status");
        assertThat(TEXT.update(item, FenceToken.of(1_001), Map.of("status", "x"))).isEqualTo(new WriteOutcome.NotFound(item.toString()));
        assertThat(TEXT.put(item, FenceToken.of(999), Map.of("status", "zombie"))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(TEXT.put(item, FenceToken.of(FenceToken.MAX_VALUE), Map.of("status", "back")).isApplied()).isTrue();
        assertThat(read(item)).containsEntry("_fence", AttributeValue.fromS("900000000000000"));
    }

    @Test
    void aClaimOfAnAbsentItemLeavesATextTombstoneAndStrictlyNewerComparesTextToo() {
        ItemKey item = fresh();
        assertThat(TEXT.claim(item, FenceToken.of(99))).isEqualTo(new WriteOutcome.NotFound(item.toString()));
        assertThat(read(item)).containsEntry("_fence", text(99)).containsEntry("_deleted", AttributeValue.fromBool(true));
        FencedDynamoDb strict = BUILDER.withEncoding(FenceEncoding.TEXT).build().fencedWrites(FencePolicy.STRICTLY_NEWER);
        assertThat(strict.put(item, FenceToken.of(99), Map.of("n", 1))).isEqualTo(new WriteOutcome.Stale(item.toString(), 99, 99,
                FencePolicy.STRICTLY_NEWER));
        assertThat(strict.put(item, FenceToken.of(100), Map.of("n", 1)).isApplied()).isTrue();
    }

    @Test
    void anItemWhoseFenceHasTheOtherTypeIsAnErrorNamingBothTypesAndNothingIsWritten() {
        ItemKey number = fresh();
        assertThat(INTEGER.put(number, FenceToken.of(5), Map.of("status", "new")).isApplied()).isTrue();
        int before = SENT.get();
        assertThatThrownBy(() -> TEXT.update(number, FenceToken.of(7), Map.of("status", "paid"))).isInstanceOfSatisfying(
                FenceGuardException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("'_fence' of the item is of type N, but these fenced writes store fences as TEXT (type S");
                });
        assertThat(SENT.get() - before).as("the write and the read after it, no retries").isEqualTo(2);
        assertThatThrownBy(() -> TEXT.claim(number, FenceToken.of(7))).isInstanceOf(FenceGuardException.class)
                .hasMessageContaining("is of type N");
        assertThatThrownBy(() -> TEXT.delete(number, FenceToken.of(7))).isInstanceOf(FenceGuardException.class)
                .hasMessageContaining("is of type N");
        assertThat(read(number)).containsEntry("_fence", AttributeValue.fromN("5")).containsEntry("status", AttributeValue.fromS("new"));

        ItemKey textual = fresh();
        assertThat(TEXT.put(textual, FenceToken.of(5), Map.of("status", "new")).isApplied()).isTrue();
        assertThatThrownBy(() -> INTEGER.put(textual, FenceToken.of(7), Map.of("status", "paid")))
                .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.getMessage())
                        .contains("is of type S, but these fenced writes store fences as INTEGER (type N"));
        CLIENT.putItem(b -> b.tableName(TABLE).item(Map.of("id", textual.key().get("id"), "_fence", AttributeValue.fromS("not a fence"))))
                .join();
        assertThatThrownBy(() -> TEXT.update(textual, FenceToken.of(7), Map.of("status", "paid")))
                .isInstanceOfSatisfying(FenceGuardException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("holds no fence: 15 digits expected (value withheld)").doesNotContain("not a fence");
                });
        assertThat(read(textual)).containsEntry("_fence", AttributeValue.fromS("not a fence"));
    }
}
