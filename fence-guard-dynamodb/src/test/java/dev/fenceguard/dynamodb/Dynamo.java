package dev.fenceguard.dynamodb;

import dev.fenceguard.testkit.servers.TestDynamoDb;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/** DynamoDB clients and tables on the test server ({@link TestDynamoDb}). */
final class Dynamo {

    private Dynamo() {}

    /** A client of the shared test server. */
    static DynamoDbAsyncClient client() {
        return client(TestDynamoDb.server().endpoint(), null);
    }

    /**
     * A client of {@code endpoint}; {@code sent}, if not null, counts the calls made through it: one per
     * operation, whatever the SDK's retries (dynalite's Node.js server closes connections idle for 5 s, and the
     * SDK resends a request that met a closed pooled connection, so HTTP attempts are not a stable count).
     */
    static DynamoDbAsyncClient client(URI endpoint, AtomicInteger sent) {
        var builder = DynamoDbAsyncClient.builder()
                .endpointOverride(endpoint)
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .httpClientBuilder(NettyNioAsyncHttpClient.builder().connectionAcquisitionTimeout(Duration.ofSeconds(30)));
        if (sent != null) {
            builder.overrideConfiguration(c -> c.executionInterceptors(List.of(new ExecutionInterceptor() {
                @Override
                public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                    sent.incrementAndGet();
                }
            })));
        }
        return builder.build();
    }

    /** A new lock table of its own, created and active, and fence-guard's builder on it. */
    static FenceGuardDynamoDb.Builder withNewLockTable(DynamoDbAsyncClient client, String name) {
        FenceGuardDynamoDb.Builder builder = FenceGuardDynamoDb.builder(client).withLockTable(TestDynamoDb.newTableName(name))
                .withClockSkewAllowance(Duration.ofMillis(50));
        builder.build().createLockTable(Duration.ofSeconds(30));
        return builder;
    }

    /** A resource table with a string partition key {@code id}, created and active. */
    static String newResourceTable(DynamoDbAsyncClient client, String name) {
        String table = TestDynamoDb.newTableName(name);
        client.createTable(b -> b.tableName(table)
                .keySchema(KeySchemaElement.builder().attributeName("id").keyType(KeyType.HASH).build())
                .attributeDefinitions(AttributeDefinition.builder().attributeName("id").attributeType(ScalarAttributeType.S).build())
                .billingMode(BillingMode.PAY_PER_REQUEST)).join();
        client.waiter().waitUntilTableExists(b -> b.tableName(table),
                w -> w.backoffStrategy(software.amazon.awssdk.core.retry.backoff.FixedDelayBackoffStrategy.create(Duration.ofMillis(100)))
                        .maxAttempts(300)).join();
        return table;
    }
}
