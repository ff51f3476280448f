package dev.fenceguard.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.servers.TestDynamoDb;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * A grant whose answer comes back after the call's timeout (a slow network, a stalled event loop): DynamoDB
 * has granted the lock, the caller has been told {@code TIMEOUT}. {@code LockBackend} asks the backend to
 * complete its stage with that late answer, so that the lock client releases the grant nobody waits for;
 * the backend once cancelled the request at the timeout instead, and the grant stayed held, unknown to
 * anyone, until its TTL ran out (found as a lock left behind by the leader-election contract in a CI run).
 * The answer is held back in the client, after the server has answered, by an SDK interceptor the test
 * controls; the test lets it go once the caller has seen its {@code TIMEOUT}.
 */
class DynamoDbLateAnswerTest {

    private static final DynamoDbAsyncClient PLAIN = Dynamo.client();
    private static final Duration LONG_TTL = Duration.ofMinutes(5);

    /** Holds back the answer of the next acquisition (an {@code UpdateItem} asking for the new fence). */
    private final AtomicBoolean holdNextGrant = new AtomicBoolean();
    private final CountDownLatch granted = new CountDownLatch(1);
    private final CountDownLatch letGo = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);
    /** The key whose release counts down {@link #released} (not the warm-up's). */
    private volatile String watched = "none";
    private final DynamoDbAsyncClient holding = DynamoDbAsyncClient.builder()
            .endpointOverride(TestDynamoDb.server().endpoint()).region(Region.US_EAST_1)
            .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
            .overrideConfiguration(c -> c.executionInterceptors(List.of(new ExecutionInterceptor() {
                @Override
                public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
                    if (context.request() instanceof UpdateItemRequest u && u.returnValues() == ReturnValue.UPDATED_NEW
                            && context.httpResponse().isSuccessful() && holdNextGrant.compareAndSet(true, false)) {
                        granted.countDown(); // DynamoDB has answered: the lock is granted on the server
                        await(letGo);
                    }
                }

                @Override
                public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
                    if (context.request() instanceof UpdateItemRequest u && u.updateExpression().startsWith("REMOVE")
                            && u.key().values().stream().anyMatch(v -> v.s() != null && v.s().endsWith(watched))) {
                        released.countDown();
                    }
                }
            }))).build();

    @AfterEach
    void close() {
        letGo.countDown();
        holding.close();
    }

    @Test
    void aGrantAnsweredAfterTheCallTimeoutReachesTheLockClientWhichReleasesIt() throws Exception {
        FenceGuardDynamoDb dynamo = Dynamo.withNewLockTable(holding, "late").withMetrics(LockMetrics.none()).build();
        LockBackend observer = FenceGuardDynamoDb.builder(PLAIN).withLockTable(dynamo.lockBackend().table()).build().lockBackend();
        LockClient locks = LockClient.builder(dynamo.lockBackend()).withMetrics(LockMetrics.none())
                .withCallTimeout(Duration.ofSeconds(1)).build();
        String key = "late:" + UUID.randomUUID();
        warmUp(dynamo.lockBackend());
        watched = key;

        holdNextGrant.set(true);
        assertThatThrownBy(() -> locks.tryAcquire(key, LONG_TTL)).as("the caller's wait ends at the call timeout")
                .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT));
        assertThat(granted.await(30, TimeUnit.SECONDS)).as("DynamoDB granted the lock meanwhile").isTrue();
        letGo.countDown(); // the answer arrives, after the timeout

        assertThat(released.await(30, TimeUnit.SECONDS)).as("the lock client released the late grant").isTrue();
        Optional<LockInfo> left = observer.lookup(LockKey.of(key), Duration.ofSeconds(10)).toCompletableFuture().get();
        assertThat(left).as("nothing left held for the %s TTL", LONG_TTL).isEmpty();
        assertThat(LockClient.of(observer).tryAcquire(key, LONG_TTL)).as("the next caller gets the lock at once")
                .hasValueSatisfying(lease -> assertThat(lease.fence().value()).isEqualTo(2));
    }

    @Test
    void aRequestStillUnansweredAfterTheGraceIsAbandonedAsTimeout() throws Exception {
        FenceGuardDynamoDb dynamo = Dynamo.withNewLockTable(holding, "abandoned").withMetrics(LockMetrics.none()).build();
        LockKey key = LockKey.of("abandoned:" + UUID.randomUUID());
        warmUp(dynamo.lockBackend());

        holdNextGrant.set(true);
        CompletableFuture<?> call = dynamo.lockBackend().tryAcquire(key, LockId.random(), LONG_TTL, Duration.ofSeconds(1))
                .toCompletableFuture();
        // Not let go: the stage must end by itself, 1 s + the grace after it was sent.
        assertThatThrownBy(call::get).isInstanceOf(ExecutionException.class).cause()
                .isInstanceOfSatisfying(FenceGuardException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT);
                    assertThat(e.getMessage()).contains("may still have been applied");
                });
        assertThat(granted.getCount()).as("the server had answered; the answer was held back").isZero();
    }

    /**
     * One grant and release of a key of its own, so that the held call's first request is not built on a cold
     * JVM: building it must not take the held call's whole timeout, or nothing is sent.
     */
    private static void warmUp(LockBackend backend) throws Exception {
        LockKey key = LockKey.of("warm:" + UUID.randomUUID());
        LockId id = LockId.random();
        assertThat(backend.tryAcquire(key, id, LONG_TTL, Duration.ofSeconds(30)).toCompletableFuture().get()).isPresent();
        assertThat(backend.release(key, id, Duration.ofSeconds(30)).toCompletableFuture().get()).isTrue();
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(60, TimeUnit.SECONDS)) {
                throw new AssertionError("the test never let the held answer go");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
