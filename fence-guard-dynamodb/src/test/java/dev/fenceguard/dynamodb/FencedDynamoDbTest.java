package dev.fenceguard.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

/** The fenced writes' outcomes, tombstones and refusals on the test DynamoDB, counting the calls each makes. */
class FencedDynamoDbTest {

    private static final AtomicInteger SENT = new AtomicInteger();
    private static final DynamoDbAsyncClient CLIENT = Dynamo.client(TestDynamoDb.server().endpoint(), SENT);
    private static final String TABLE = Dynamo.newResourceTable(CLIENT, "fenced");
    private static final FenceGuardDynamoDb DYNAMO = Dynamo.withNewLockTable(CLIENT, "fenced-locks").withMetrics(LockMetrics.none()).build();
    private static final FencedDynamoDb FENCED = DYNAMO.fencedWrites();

    private static ItemKey fresh() {
        return ItemKey.of(TABLE, "id", UUID.randomUUID().toString());
    }

    private static Map<String, AttributeValue> read(ItemKey item) {
        var got = CLIENT.getItem(b -> b.tableName(TABLE).key(item.key()).consistentRead(true)).join();
        return got.hasItem() && !got.item().isEmpty() ? got.item() : null;
    }

    private static int sent(Runnable call) {
        int before = SENT.get();
        call.run();
        return SENT.get() - before;
    }

    @Test
    void anAppliedWriteTakesOneRequestAndARefusalOneReadMore() {
        ItemKey item = fresh();
        assertThat(sent(() -> assertThat(FENCED.put(item, FenceToken.of(5), Map.of("status", "new")).isApplied()).isTrue()))
                .as("an applied put").isEqualTo(1);
        assertThat(sent(() -> assertThat(FENCED.update(item, FenceToken.of(5), Map.of("status", "paid")).isApplied()).isTrue()))
                .as("an applied update under the same fence").isEqualTo(1);
        int[] refused = new int[1];
        refused[0] = sent(() -> assertThat(FENCED.update(item, FenceToken.of(4), Map.of("status", "late")))
                .isEqualTo(new WriteOutcome.Stale(item.toString(), 4, 5, FencePolicy.SAME_OR_NEWER)));
        assertThat(refused[0]).as("a refused update on dynalite: the write, then one consistent read").isEqualTo(2);
        assertThat(read(item)).containsEntry("status", AttributeValue.fromS("paid")).containsEntry("_fence", AttributeValue.fromN("5"));
    }

    @Test
    void anUpdateOfAnAbsentItemIsNotFoundAndCreatesNothing() {
        ItemKey item = fresh();
        assertThat(FENCED.update(item, FenceToken.of(3), Map.of("status", "x"))).isEqualTo(new WriteOutcome.NotFound(item.toString()));
        assertThat(read(item)).isNull();
    }

    @Test
    void aDeleteLeavesATombstoneThatRefusesOlderPutsAndAnUpdateFindsNothing() {
        ItemKey item = fresh();
        FENCED.put(item, FenceToken.of(5), Map.of("status", "new"));
        assertThat(FENCED.delete(item, FenceToken.of(6)).isApplied()).isTrue();
        assertThat(read(item)).containsEntry("_deleted", AttributeValue.fromBool(true)).containsEntry("_fence", AttributeValue.fromN("6"))
                .doesNotContainKey("status");
        assertThat(FENCED.put(item, FenceToken.of(5), Map.of("status", "zombie"))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(FENCED.update(item, FenceToken.of(7), Map.of("status", "x"))).isEqualTo(new WriteOutcome.NotFound(item.toString()));
        assertThat(FENCED.put(item, FenceToken.of(7), Map.of("status", "back")).isApplied()).isTrue();
        assertThat(read(item)).containsEntry("status", AttributeValue.fromS("back")).doesNotContainKey("_deleted");
    }

    @Test
    void aClaimRecordsTheFenceOnTheItemOrOnATombstone() {
        ItemKey live = fresh();
        FENCED.put(live, FenceToken.of(2), Map.of("status", "new"));
        assertThat(FENCED.claim(live, FenceToken.of(9)).isApplied()).isTrue();
        assertThat(read(live)).containsEntry("_fence", AttributeValue.fromN("9")).containsEntry("status", AttributeValue.fromS("new"));
        assertThat(FENCED.update(live, FenceToken.of(8), Map.of("status", "zombie"))).isInstanceOf(WriteOutcome.Stale.class);

        ItemKey absent = fresh();
        assertThat(FENCED.claim(absent, FenceToken.of(4))).isEqualTo(new WriteOutcome.NotFound(absent.toString()));
        assertThat(read(absent)).containsEntry("_deleted", AttributeValue.fromBool(true)).containsEntry("_fence", AttributeValue.fromN("4"));
        assertThat(FENCED.put(absent, FenceToken.of(3), Map.of("status", "zombie"))).isInstanceOf(WriteOutcome.Stale.class);
    }

    @Test
    void strictlyNewerRefusesTheSameFenceTwice() {
        ItemKey item = fresh();
        FencedDynamoDb strict = DYNAMO.fencedWrites(FencePolicy.STRICTLY_NEWER);
        assertThat(strict.put(item, FenceToken.of(5), Map.of("n", 1)).isApplied()).isTrue();
        assertThat(strict.update(item, FenceToken.of(5), Map.of("n", 2))).isEqualTo(new WriteOutcome.Stale(item.toString(), 5, 5,
                FencePolicy.STRICTLY_NEWER));
        assertThat(strict.update(item, FenceToken.of(6), Map.of("n", 2)).isApplied()).isTrue();
    }

    @Test
    void badInputIsRefusedBeforeAnyRequestAndWritesNothing() {
        ItemKey item = fresh();
        String lockTable = DYNAMO.lockBackend().table();
        int sent = sent(() -> {
            assertThatThrownBy(() -> FENCED.update(item, FenceToken.of(1), Map.of())).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("at least one attribute");
            assertThatThrownBy(() -> FENCED.put(item, FenceToken.of(1), Map.of("_fence", 9))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("fence attribute '_fence'");
            assertThatThrownBy(() -> FENCED.update(item, FenceToken.of(1), Map.of("id", "other"))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("key attribute 'id'");
            assertThatThrownBy(() -> FENCED.put(item, FenceToken.of(1), Map.of("when", new Object())))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("values.when must be an AttributeValue");
            assertThatThrownBy(() -> FENCED.claim(ItemKey.of(lockTable, "pk", "kx"), FenceToken.of(1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock table");
            assertThatThrownBy(() -> FENCED.delete(item, null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> ItemKey.of("x", "id", "1")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("table must be a DynamoDB table name");
            assertThatThrownBy(() -> ItemKey.of(TABLE, "id", true)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("must be a string, a number or bytes");
        });
        assertThat(sent).as("calls made for bad input").isZero();
        assertThat(read(item)).isNull();
    }

    @Test
    void theBuilderRefusesBadSettingsNamingThem() {
        var builder = FenceGuardDynamoDb.builder(CLIENT);
        assertThatThrownBy(() -> builder.withClockSkewAllowance(java.time.Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("clockSkewAllowance must be between 0 and 10 minutes, was PT-0.001S");
        assertThatThrownBy(() -> builder.withLockTable("no spaces")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockTable must be a DynamoDB table name");
        assertThatThrownBy(() -> builder.withFenceAttribute("_deleted")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fenceAttribute must be non-empty and differ from deletedAttribute");
        assertThatThrownBy(() -> builder.withCallTimeout(java.time.Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void createLockTableIsIdempotentAndWarmUpReadsWithoutWriting() {
        assertThat(DYNAMO.createLockTable(java.time.Duration.ofSeconds(30))).as("already there").isFalse();
        DYNAMO.lockBackend().warmUp(java.time.Duration.ofSeconds(10)).toCompletableFuture().join();
        FENCED.warmUp();
        var scan = CLIENT.scan(b -> b.tableName(DYNAMO.lockBackend().table())).join();
        assertThat(scan.items()).as("warm-ups write nothing").isEmpty();
    }
}
