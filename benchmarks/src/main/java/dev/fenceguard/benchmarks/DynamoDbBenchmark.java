package dev.fenceguard.benchmarks;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.dynamodb.AsyncFencedDynamoDb;
import dev.fenceguard.dynamodb.FenceGuardDynamoDb;
import dev.fenceguard.dynamodb.FencedDynamoDb;
import dev.fenceguard.dynamodb.ItemKey;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.TestDynamoDb;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * DynamoDB benchmark of issue #32 on the test DynamoDB (dynalite unless {@code FENCE_GUARD_TEST_DYNAMODB_URL}
 * names another): fence-guard against the natural baseline, a conditional {@code UpdateItem} written by
 * hand with the same SDK client, on the same server and threads, in alternating rounds.
 * <ul>
 *   <li>fenced update: {@code FencedDynamoDb.update} (blocking face) and {@code AsyncFencedDynamoDb.update}
 *       (joined per call) against a hand-written fenced {@code UpdateItem}
 *       ({@code SET #s = :s, #f = :f} if {@code attribute_exists(#k) AND (attribute_not_exists(#f) OR #f <= :f)}),
 *       and against a plain conditional one ({@code SET #s = :s} if {@code attribute_exists(#k)});</li>
 *   <li>lock pair: fence-guard's acquire + release ({@code DynamoDbLockBackend} through {@code BlockingBackend})
 *       against a hand-written pair of conditional {@code UpdateItem}s on a table of the same key schema (grant:
 *       {@code SET fence = if_not_exists(fence, 0) + 1, lockId, expiresAt} if free, {@code UPDATED_NEW}; release:
 *       {@code REMOVE lockId, expiresAt} if {@code lockId = :id}).</li>
 * </ul>
 * Both sides use one {@code DynamoDbAsyncClient} (the SDK's Netty client) and wait on each call, so a ratio
 * shows what fence-guard adds on the client, not what DynamoDB would cost: dynalite is one Node.js process
 * on the same machine, not DynamoDB. Arguments: {@code [seconds-per-phase=3] [threads=1,8] [rounds=5]}.
 */
public final class DynamoDbBenchmark {

    private static final int ITEMS_PER_THREAD = 250;
    private static final int KEYS_PER_THREAD = 200;

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        int[] threadCounts = Arrays.stream((args.length > 1 ? args[1] : "1,8").split(",")).mapToInt(s -> Integer.parseInt(s.trim()))
                .toArray();
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        int maxThreads = Arrays.stream(threadCounts).max().orElseThrow();
        TestDynamoDb server = TestDynamoDb.server();
        AtomicLong requests = new AtomicLong();
        try (DynamoDbAsyncClient client = DynamoDbAsyncClient.builder().endpointOverride(server.endpoint()).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("bench", "bench")))
                .httpClientBuilder(NettyNioAsyncHttpClient.builder().maxConcurrency(Math.max(50, 2 * maxThreads)))
                .overrideConfiguration(c -> c.executionInterceptors(List.of(new ExecutionInterceptor() {
                    @Override
                    public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                        requests.incrementAndGet();
                    }
                }))).build()) {
            FenceGuardDynamoDb fenceGuard = FenceGuardDynamoDb.builder(client).withLockTable(TestDynamoDb.newTableName("bench-locks"))
                    .withMetrics(LockMetrics.none()).build();
            fenceGuard.createLockTable(Duration.ofSeconds(30));
            String orders = table(client, "bench-orders", "id");
            String handLocks = table(client, "bench-hand-locks", "pk");
            List<CompletableFuture<?>> puts = new ArrayList<>();
            for (int i = 0; i < maxThreads * ITEMS_PER_THREAD; i++) {
                String id = "o" + i;
                puts.add(client.putItem(b -> b.tableName(orders).item(Map.of("id", AttributeValue.fromS(id),
                        "status", AttributeValue.fromS("new")))));
                if (puts.size() == 64) {
                    CompletableFuture.allOf(puts.toArray(CompletableFuture[]::new)).join();
                    puts.clear();
                }
            }
            CompletableFuture.allOf(puts.toArray(CompletableFuture[]::new)).join();

            BlockingBackend backend = BlockingBackend.of(fenceGuard.lockBackend());
            FencedDynamoDb fenced = fenceGuard.fencedWrites();
            AsyncFencedDynamoDb asyncFenced = fenced.async();
            Duration ttl = Duration.ofSeconds(30);
            FenceToken fence = FenceToken.of(7);

            Harness.Op fencedOp = (t, i) -> fenced.update(ItemKey.of(orders, "id", item(t, i)), fence, Map.of("status", "paid")).orThrow();
            Harness.Op asyncFencedOp = (t, i) -> asyncFenced.update(ItemKey.of(orders, "id", item(t, i)), fence, Map.of("status", "paid"))
                    .toCompletableFuture().join().orThrow();
            Harness.Op handFencedOp = (t, i) -> client.updateItem(handFenced(orders, item(t, i), fence.value())).join();
            Harness.Op plainOp = (t, i) -> client.updateItem(plainConditional(orders, item(t, i))).join();
            Harness.Op pairOp = (t, i) -> {
                LockKey k = LockKey.of("bench:" + t + ":" + (i % KEYS_PER_THREAD));
                LockId id = LockId.random();
                backend.tryAcquire(k, id, ttl).orElseThrow();
                if (!backend.release(k, id)) {
                    throw new IllegalStateException("release of a live lease answered false");
                }
            };
            Harness.Op handPairOp = (t, i) -> {
                String pk = "kbench:" + t + ":" + (i % KEYS_PER_THREAD);
                String id = LockId.random().value();
                long now = System.currentTimeMillis();
                Long.parseLong(client.updateItem(handGrant(handLocks, pk, id, now, now + ttl.toMillis())).join().attributes().get("fence").n());
                client.updateItem(handRelease(handLocks, pk, id)).join();
            };

            long before = requests.get();
            fencedOp.run(0, 0);
            long perFenced = requests.get() - before;
            before = requests.get();
            handFencedOp.run(0, 0);
            long perHandFenced = requests.get() - before;
            before = requests.get();
            pairOp.run(0, 0);
            long perPair = requests.get() - before;
            before = requests.get();
            handPairOp.run(0, 0);
            long perHandPair = requests.get() - before;
            System.out.printf(Locale.ROOT, "DynamoDB API at %s (%s), SDK calls per operation: fenced update %d, hand-written fenced"
                    + " UpdateItem %d; lock pair %d, hand-written pair %d%n%.1f s per phase, %d alternating rounds, median of rounds;"
                    + " the spread is the lowest and highest ratio of one round's pair of phases%n%n", server.endpoint(), server.origin(),
                    perFenced, perHandFenced, perPair, perHandPair, seconds, rounds);

            for (int threads : threadCounts) {
                Harness h = new Harness(threads, seconds);
                System.out.printf(Locale.ROOT, "--- %d thread%s ---%n", threads, threads == 1 ? "" : "s");
                for (Harness.Op op : List.of(fencedOp, asyncFencedOp, handFencedOp, plainOp)) {
                    h.measure(op); // warm-up
                }
                List<List<Harness.Phase>> updates = h.compare(rounds, List.of(fencedOp, asyncFencedOp, handFencedOp, plainOp));
                report("fenced update, blocking face", updates.get(0), "hand-written fenced UpdateItem", updates.get(2));
                report("fenced update, async face", updates.get(1), "hand-written fenced UpdateItem", updates.get(2));
                report("fenced update, blocking face", updates.get(0), "plain conditional UpdateItem", updates.get(3));
                report("hand-written fenced UpdateItem", updates.get(2), "plain conditional UpdateItem", updates.get(3));
                h.measure(pairOp);
                h.measure(handPairOp);
                List<List<Harness.Phase>> pairs = h.compare(rounds, List.of(pairOp, handPairOp));
                report("acquire+release pairs", pairs.get(0), "hand-written conditional pair", pairs.get(1));
            }
        }
    }

    private static String item(int thread, long iteration) {
        return "o" + (thread * ITEMS_PER_THREAD + iteration % ITEMS_PER_THREAD);
    }

    /** The fenced update a careful hand would write: the item must exist, and its fence be absent or not newer. */
    private static UpdateItemRequest handFenced(String table, String id, long fence) {
        return UpdateItemRequest.builder().tableName(table).key(Map.of("id", AttributeValue.fromS(id)))
                .updateExpression("SET #s = :s, #f = :f")
                .conditionExpression("attribute_exists(#k) AND (attribute_not_exists(#f) OR #f <= :f)")
                .expressionAttributeNames(Map.of("#s", "status", "#f", "_fence", "#k", "id"))
                .expressionAttributeValues(Map.of(":s", AttributeValue.fromS("paid"), ":f", AttributeValue.fromN(Long.toString(fence))))
                .build();
    }

    /** The natural unfenced write: the item must exist. */
    private static UpdateItemRequest plainConditional(String table, String id) {
        return UpdateItemRequest.builder().tableName(table).key(Map.of("id", AttributeValue.fromS(id)))
                .updateExpression("SET #s = :s").conditionExpression("attribute_exists(#k)")
                .expressionAttributeNames(Map.of("#s", "status", "#k", "id"))
                .expressionAttributeValues(Map.of(":s", AttributeValue.fromS("paid"))).build();
    }

    private static UpdateItemRequest handGrant(String table, String pk, String id, long now, long expires) {
        return UpdateItemRequest.builder().tableName(table).key(Map.of("pk", AttributeValue.fromS(pk)))
                .updateExpression("SET #fence = if_not_exists(#fence, :zero) + :one, #lockId = :id, #exp = :exp")
                .conditionExpression("attribute_not_exists(#lockId) OR #exp <= :now")
                .expressionAttributeNames(Map.of("#fence", "fence", "#lockId", "lockId", "#exp", "expiresAt"))
                .expressionAttributeValues(Map.of(":zero", AttributeValue.fromN("0"), ":one", AttributeValue.fromN("1"),
                        ":id", AttributeValue.fromS(id), ":exp", AttributeValue.fromN(Long.toString(expires)),
                        ":now", AttributeValue.fromN(Long.toString(now))))
                .returnValues(ReturnValue.UPDATED_NEW).build();
    }

    private static UpdateItemRequest handRelease(String table, String pk, String id) {
        return UpdateItemRequest.builder().tableName(table).key(Map.of("pk", AttributeValue.fromS(pk)))
                .updateExpression("REMOVE #lockId, #exp").conditionExpression("#lockId = :id")
                .expressionAttributeNames(Map.of("#lockId", "lockId", "#exp", "expiresAt"))
                .expressionAttributeValues(Map.of(":id", AttributeValue.fromS(id))).build();
    }

    private static String table(DynamoDbAsyncClient client, String name, String key) {
        String table = TestDynamoDb.newTableName(name);
        client.createTable(b -> b.tableName(table)
                .keySchema(KeySchemaElement.builder().attributeName(key).keyType(KeyType.HASH).build())
                .attributeDefinitions(AttributeDefinition.builder().attributeName(key).attributeType(ScalarAttributeType.S).build())
                .billingMode(BillingMode.PAY_PER_REQUEST)).join();
        client.waiter().waitUntilTableExists(b -> b.tableName(table)).join();
        return table;
    }

    /** Every round's pair, then the medians and their ratio, with the spread of the rounds' ratios. */
    private static void report(String name, List<Harness.Phase> a, String baseline, List<Harness.Phase> b) {
        double[] ratios = new double[a.size()];
        StringBuilder rounds = new StringBuilder();
        for (int r = 0; r < a.size(); r++) {
            ratios[r] = a.get(r).opsPerSecond() / b.get(r).opsPerSecond();
            rounds.append(String.format(Locale.ROOT, "%s%.0f/%.0f", r == 0 ? "" : ", ", a.get(r).opsPerSecond(), b.get(r).opsPerSecond()));
        }
        Harness.Phase ma = Harness.median(a);
        Harness.Phase mb = Harness.median(b);
        System.out.printf(Locale.ROOT, "%-32s %7.0f/s  p50 %5d us  p99 %6d us  cpu %5.0f us/op%n%-32s %7.0f/s  p50 %5d us  p99 %6d us  cpu %5.0f us/op%n"
                + "  ratio of medians %.2fx (rounds %.2fx to %.2fx; ops/s per round %s)%n%n",
                name, ma.opsPerSecond(), ma.p50Micros(), ma.p99Micros(), ma.cpuMicrosPerOp(),
                baseline, mb.opsPerSecond(), mb.p50Micros(), mb.p99Micros(), mb.cpuMicrosPerOp(),
                ma.opsPerSecond() / mb.opsPerSecond(), Arrays.stream(ratios).min().orElse(0), Arrays.stream(ratios).max().orElse(0), rounds);
    }
}
