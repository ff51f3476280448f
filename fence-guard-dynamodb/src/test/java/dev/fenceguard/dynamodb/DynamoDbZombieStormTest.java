package dev.fenceguard.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.ZombieStorm;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The zombie storm on the DynamoDB lock backend with FencedDynamoDb, on the test DynamoDB (dynalite): every
 * zombie's write must be refused by the fence and no update lost. Size: 60 attempts, or
 * {@code -Dfenceguard.storm.attempts=N} for a soak.
 */
class DynamoDbZombieStormTest {

    private static final DynamoDbAsyncClient CLIENT = Dynamo.client();

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLost() throws Exception {
        String table = Dynamo.newResourceTable(CLIENT, "storm");
        ItemKey counter = ItemKey.of(table, "id", "counter");
        CLIENT.putItem(b -> b.tableName(table).item(Map.of("id", AttributeValue.fromS("counter"), "n", AttributeValue.fromN("0")))).join();
        FenceGuardDynamoDb dynamo = Dynamo.withNewLockTable(CLIENT, "storm-locks").withMetrics(LockMetrics.none()).build();
        FencedDynamoDb fenced = dynamo.fencedWrites();
        LockClient locks = LockClient.builder(dynamo.lockBackend()).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(2), Duration.ofMillis(100)).build();
        ZombieStorm storm = ZombieStorm.builder(locks, "counter", new ZombieStorm.FencedCounter() {
            @Override
            public WriteOutcome claim(FenceToken fence) {
                return fenced.claim(counter, fence);
            }

            @Override
            public long read() {
                return Long.parseLong(CLIENT.getItem(b -> b.tableName(table).key(counter.key()).consistentRead(true)).join()
                        .item().get("n").n());
            }

            @Override
            public WriteOutcome write(long value, FenceToken fence) {
                return fenced.update(counter, fence, Map.of("n", value));
            }
        }).withAttempts(ZombieStorm.attemptsProperty(60)).withTtl(Duration.ofMillis(300)).withCallTimeout(Duration.ofSeconds(30)).build();
        ZombieStorm.Result result = storm.run();
        System.out.println("STORM dynamodb: " + result.summary());
        result.requireSafe();
        assertThat(result.attempts()).isEqualTo(ZombieStorm.attemptsProperty(60));
        assertThat(result.stalls()).as("zombies were made").isPositive();
    }
}
