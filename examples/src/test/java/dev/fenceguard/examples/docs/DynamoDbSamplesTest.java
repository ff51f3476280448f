package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.dynamodb.FenceGuardDynamoDb;
import dev.fenceguard.dynamodb.ItemKey;
import dev.fenceguard.testkit.servers.TestDynamoDb;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/**
 * Runs the samples of docs/dynamodb.md and of the dynamodb module's Javadoc on a dynalite of their own (the
 * samples name their tables literally, so they get a server no other test shares).
 */
class DynamoDbSamplesTest {

    private static TestDynamoDb server;
    private static DynamoDbAsyncClient client;

    @BeforeAll
    static void start() {
        server = TestDynamoDb.startDynalite();
        client = DynamoDbAsyncClient.builder().endpointOverride(server.endpoint()).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test"))).build();
        client.createTable(b -> b.tableName("orders").billingMode("PAY_PER_REQUEST")
                .keySchema(k -> k.attributeName("id").keyType("HASH"))
                .attributeDefinitions(a -> a.attributeName("id").attributeType(ScalarAttributeType.S))).join();
        client.waiter().waitUntilTableExists(b -> b.tableName("orders"),
                w -> w.backoffStrategy(software.amazon.awssdk.core.retry.backoff.FixedDelayBackoffStrategy.create(Duration.ofMillis(100)))
                        .maxAttempts(300)).join();
        client.putItem(b -> b.tableName("orders").item(Map.of("id", AttributeValue.fromS("42"), "status", AttributeValue.fromS("new"))))
                .join();
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
    }

    private static Map<String, AttributeValue> order() {
        return client.getItem(b -> b.tableName("orders").key(Map.of("id", AttributeValue.fromS("42"))).consistentRead(true)).join().item();
    }

    @Test
    void setUpSampleCreatesTheLockTablePaysAndShipsUnderTwoRisingFences() throws Exception {
        DynamoDbSamples.SetUp done = DynamoDbSamples.docSetUp(client);
        WriteOutcome paid = done.paid().orElseThrow();
        WriteOutcome shipped = done.shipped().toCompletableFuture().join().orElseThrow();
        assertThat(((WriteOutcome.Applied) shipped).fence()).isGreaterThan(((WriteOutcome.Applied) paid).fence());
        assertThat(order()).containsEntry("status", AttributeValue.fromS("shipped"));
    }

    /**
     * dynalite 4.0.0 has no TransactWriteItems: the sample runs up to the server, which refuses the operation, and
     * nothing is written. Its request shapes and outcomes run in the dynamodb module's TransactWriteItemsTest, on an
     * HTTP fake of DynamoDB's documented answers (docs/dynamodb.md, What ran where).
     */
    @Test
    void transactionSampleReachesTheServerWhichDynaliteRefusesAsAnUnknownOperation() {
        FenceGuardDynamoDb fenceGuard = FenceGuardDynamoDb.builder(client).build();
        fenceGuard.createLockTable(Duration.ofMinutes(1));
        LockClient locks = LockClient.of(fenceGuard.lockBackend());
        Map<String, AttributeValue> before = order();
        assertThatThrownBy(() -> locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
                lease -> DynamoDbSamples.docTransaction(fenceGuard.fencedWrites(), lease)))
                .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.getMessage()).contains("UnknownOperationException"));
        assertThat(order()).isEqualTo(before);
    }

    @Test
    void javadocSamplesWriteUnderALeaseAndNameItems() throws Exception {
        FenceGuardDynamoDb fenceGuard = FenceGuardDynamoDb.builder(client).build();
        fenceGuard.createLockTable(Duration.ofMinutes(1));
        LockClient locks = LockClient.of(fenceGuard.lockBackend());
        WriteOutcome outcome = locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
                lease -> DynamoDbSamples.javadocFenced(client, lease)).orElseThrow();
        assertThat(outcome.isApplied()).isTrue();
        ItemKey[] keys = DynamoDbSamples.javadocItemKey();
        assertThat(keys[0]).hasToString("orders[id=42]");
        assertThat(keys[1]).hasToString("order_lines[orderId=42, line=3]");
    }
}
