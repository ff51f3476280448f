package dev.fenceguard.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.dynamodb.internal.DynamoDbErrors;
import dev.fenceguard.testkit.ZombieStorm;
import dev.fenceguard.testkit.servers.TcpProxy;
import dev.fenceguard.testkit.servers.TestDynamoDb;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;

/**
 * Zombie storms with faults. The lock table lives on a private dynalite (started by the test on a loopback
 * port of its own) that is killed ({@code SIGKILL}, as a crash) and restarted on the same port twice
 * mid-storm; the counter (the guarded resource) lives on the shared test dynalite: a different store than
 * the one destroyed, since losing the resource itself is data loss, not a fencing failure. Then the
 * client's connections (lock and resource, one server) are cut and delayed through a loopback proxy. In
 * each: no stale write applied, no update lost, every error a mapped FenceGuardException, the storm ends on
 * its own, every fault ran, and writes sent after the last fault were applied (the storm went on, not only
 * stayed safe). Size: 100 attempts, or {@code -Dfenceguard.storm.attempts=N}; a stall (a zombie) in one
 * attempt of five, fewer above 1,000 attempts (the storm's default), to keep the class near 35 s.
 *
 * <p><b>Which fence strategy.</b> Restarted with its data kept (dynalite's LevelDB store, {@code --path}),
 * the lock table and its fence counters survive the kill, so the storm uses {@link FenceStrategy#DENSE}: a
 * dense counter that outlives a crash stays monotonic. Restarted empty (in memory), the lock table is
 * gone: the fault step recreates it, as an operator would, and every counter starts again. A dense
 * counter would then issue 1, 2, 3 again, below the fence the counter already holds: still safe (the
 * resource refuses them as stale) but the resource is stuck until the counter climbs past it
 * ({@link #anEmptyRestartRewindsDenseFencesButNotClockFlooredOnes} shows both). So that storm uses
 * {@link FenceStrategy#CLOCK_FLOORED}, whose fences start above the client's clock, hence above every fence
 * issued before the loss, as on Redis after a restart without persistence.
 */
class DynamoDbFaultStormTest {

    private static final int DEFAULT_ATTEMPTS = 100;
    private static final Duration TTL = Duration.ofMillis(300);
    private static final DynamoDbAsyncClient SHARED = Dynamo.client();

    /**
     * The counter of the storm, on the shared server: one item, its value in {@code n}, written with fenced
     * updates; it counts the writes applied that were sent after {@code faultsDone} reached {@code faults}.
     */
    private static final class Counter implements ZombieStorm.FencedCounter {
        final AtomicInteger faultsDone = new AtomicInteger();
        final AtomicInteger appliedAfterFaults = new AtomicInteger();
        private final DynamoDbAsyncClient client;
        private final FencedDynamoDb fenced;
        private final ItemKey item;
        private final int faults;

        Counter(DynamoDbAsyncClient client, FencedDynamoDb fenced, String table, int faults) {
            this.client = client;
            this.fenced = fenced;
            this.item = ItemKey.of(table, "id", "counter");
            this.faults = faults;
            client.putItem(b -> b.tableName(table).item(Map.of("id", AttributeValue.fromS("counter"), "n", AttributeValue.fromN("0"))))
                    .join();
        }

        @Override
        public WriteOutcome claim(FenceToken fence) {
            return fenced.claim(item, fence);
        }

        /**
         * The test's own consistent read, its errors mapped as fence-guard maps them (so a failed read in the storm
         * is a counted error, not an unmapped one). A read changes nothing, so a failed one is sent again, up to three
         * times in all: the storm's final read, which judges it, must not end it on the last connection a cut or
         * dynalite's idle timeout reset (seen in 2 of 33 runs at loads 12 to 17, the SDK refusing to retry it).
         */
        @Override
        public long read() {
            for (int attempt = 1;; attempt++) {
                try {
                    return Long.parseLong(client.getItem(b -> b.tableName(item.table()).key(item.key()).consistentRead(true)).join()
                            .item().get("n").n());
                } catch (CompletionException e) {
                    // DynamoDbErrors.join would throw the SDK's own (unchecked) exception as it is: it expects stages
                    // fence-guard already mapped. This stage is the raw client's, so it is mapped here.
                    FenceGuardException mapped = DynamoDbErrors.failure(e.getCause(), item.table(), "read");
                    if (attempt == 3 || mapped.code() != ErrorCode.UNAVAILABLE) {
                        throw mapped;
                    }
                }
            }
        }

        @Override
        public WriteOutcome write(long value, FenceToken fence) {
            boolean afterFaults = faultsDone.get() == faults;
            WriteOutcome outcome = fenced.update(item, fence, Map.of("n", value));
            if (afterFaults && outcome instanceof WriteOutcome.Applied) {
                appliedAfterFaults.incrementAndGet();
            }
            return outcome;
        }
    }

    private static LockClient locks(FenceGuardDynamoDb lockSide) {
        return LockClient.builder(lockSide.lockBackend()).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(2), Duration.ofMillis(100)).build();
    }

    private static ZombieStorm.Builder storm(LockClient locks, Counter counter, int size) {
        return ZombieStorm.builder(locks, "counter", counter).withAttempts(size).withTtl(TTL).withCallTimeout(Duration.ofSeconds(30))
                .withStallProbability(Math.min(0.2, 200.0 / size));
    }

    private static ZombieStorm.Result report(String label, ZombieStorm.Result r, Counter counter) {
        System.out.println("STORM dynamodb, " + label + ": " + r.summary() + " applied-after-the-faults=" + counter.appliedAfterFaults.get());
        r.firstErrors().forEach((code, e) -> System.out.println("  first " + code + ": " + e.getMessage()));
        return r;
    }

    /** What a fault does once the killed lock server listens again. */
    @FunctionalInterface
    private interface AfterRestart {
        void run(FenceGuardDynamoDb lockSide, DynamoDbAsyncClient lockClient) throws Exception;
    }

    /**
     * A storm whose lock table is on {@code server} (with {@code strategy}) and whose counter is on the shared
     * server; at a quarter and at half of the attempts the server is killed and restarted, then
     * {@code afterRestart} runs (half the storm comes after the second restart).
     */
    private static void stormWithLockServerRestarts(TestDynamoDb server, FenceStrategy strategy, String label,
            AfterRestart afterRestart) throws Exception {
        int size = ZombieStorm.attemptsProperty(DEFAULT_ATTEMPTS);
        try (DynamoDbAsyncClient lockClient = Dynamo.client(server.endpoint(), null)) {
            FenceGuardDynamoDb lockSide = FenceGuardDynamoDb.builder(lockClient).withLockTable(TestDynamoDb.newTableName("faultstorm-locks"))
                    .withClockSkewAllowance(Duration.ofMillis(50)).withFenceStrategy(strategy).withMetrics(LockMetrics.none()).build();
            assertThat(lockSide.createLockTable(Duration.ofSeconds(30))).isTrue();
            // Two servers, so two FenceGuardDynamoDb: the lock backend of one, the fenced writes of the other.
            FencedDynamoDb fenced = FenceGuardDynamoDb.builder(SHARED).withMetrics(LockMetrics.none()).build().fencedWrites();
            Counter counter = new Counter(SHARED, fenced, Dynamo.newResourceTable(SHARED, "faultstorm"), 2);
            ZombieStorm.Fault fault = () -> {
                server.kill();
                server.restart();
                afterRestart.run(lockSide, lockClient);
                counter.faultsDone.incrementAndGet();
            };
            ZombieStorm.Result r = report(label, storm(locks(lockSide), counter, size)
                    .withFault(Math.max(1, size / 4), fault)
                    .withFault(Math.max(1, size / 2), fault)
                    .build().run(), counter);
            r.requireSafe();
            assertThat(r.faultsRun()).isEqualTo(2);
            assertThat(counter.appliedAfterFaults.get()).as("writes sent after the second restart were applied").isPositive();
        }
    }

    @Test
    void theLockServerKilledAndRestartedWithItsDataMidStorm() throws Exception {
        TestDynamoDb server = TestDynamoDb.startDynaliteOnDisk();
        try {
            stormWithLockServerRestarts(server, FenceStrategy.DENSE, "lock server killed and restarted with its data (DENSE)",
                    (lockSide, lockClient) -> {
                        // nothing recreated: the lock table, and the counters in it, must have outlived the kill
                        TableStatus status = lockClient.describeTable(b -> b.tableName(lockSide.lockBackend().table())).join()
                                .table().tableStatus();
                        if (status != TableStatus.ACTIVE) {
                            throw new AssertionError("the lock table is " + status + " after the restart");
                        }
                    });
        } finally {
            server.close();
        }
    }

    @Test
    void theLockServerKilledAndRestartedEmptyMidStorm() throws Exception {
        TestDynamoDb server = TestDynamoDb.startDynalite();
        try {
            stormWithLockServerRestarts(server, FenceStrategy.CLOCK_FLOORED,
                    "lock server killed and restarted empty, lock table recreated (CLOCK_FLOORED)", (lockSide, lockClient) -> {
                        // what an operator does when the table is gone; true: it was gone, so the restart lost everything
                        if (!lockSide.createLockTable(Duration.ofSeconds(30))) {
                            throw new AssertionError("the lock table outlived an in-memory restart");
                        }
                    });
        } finally {
            server.close();
        }
    }

    @Test
    void theConnectionsCutAndDelayedMidStorm() throws Exception {
        int size = ZombieStorm.attemptsProperty(DEFAULT_ATTEMPTS);
        URI shared = TestDynamoDb.server().endpoint();
        try (TcpProxy proxy = TcpProxy.start(shared.getHost(), shared.getPort());
                DynamoDbAsyncClient client = Dynamo.client(URI.create("http://127.0.0.1:" + proxy.port()), null)) {
            FenceGuardDynamoDb dynamo = Dynamo.withNewLockTable(client, "proxystorm-locks").withMetrics(LockMetrics.none()).build();
            Counter counter = new Counter(client, dynamo.fencedWrites(), Dynamo.newResourceTable(client, "proxystorm"), 4);
            ZombieStorm.Fault done = () -> counter.faultsDone.incrementAndGet();
            int delayed = Math.max(2, size / 2);
            ZombieStorm.Result r = report("connections cut and delayed", storm(locks(dynamo), counter, size)
                    .withFault(Math.max(1, size / 4), proxy::cutConnections)
                    .withFault(Math.max(1, size / 4), done)
                    // 60 ms each way: an attempt's four or five round trips outlast its 300 ms lease, for 10 attempts.
                    .withFault(delayed, () -> proxy.delay(Duration.ofMillis(60)))
                    .withFault(delayed, done)
                    .withFault(Math.min(size, delayed + 10), () -> proxy.delay(Duration.ZERO))
                    .withFault(Math.min(size, delayed + 10), proxy::cutConnections)
                    .withFault(Math.min(size, delayed + 10), done)
                    .withFault(Math.min(size, delayed + 10), done)
                    .build().run(), counter);
            r.requireSafe();
            assertThat(r.faultsRun()).isEqualTo(8);
            assertThat(counter.appliedAfterFaults.get()).as("writes sent after the last cut were applied").isPositive();
        }
    }

    /**
     * Why the empty restart's storm uses CLOCK_FLOORED, step by step: three grants and writes, the lock server
     * killed and restarted empty, its table recreated, one more grant. With DENSE the new grant's fence is 1
     * again and the resource refuses it as stale (safe, but stuck); with CLOCK_FLOORED it is above the three
     * and the write is applied.
     */
    @Test
    void anEmptyRestartRewindsDenseFencesButNotClockFlooredOnes() throws Exception {
        TestDynamoDb server = TestDynamoDb.startDynalite();
        try (DynamoDbAsyncClient lockClient = Dynamo.client(server.endpoint(), null)) {
            FencedDynamoDb fenced = FenceGuardDynamoDb.builder(SHARED).withMetrics(LockMetrics.none()).build().fencedWrites();
            for (FenceStrategy strategy : new FenceStrategy[] {FenceStrategy.DENSE, FenceStrategy.CLOCK_FLOORED}) {
                FenceGuardDynamoDb lockSide = FenceGuardDynamoDb.builder(lockClient).withLockTable(TestDynamoDb.newTableName("rewind-locks"))
                        .withFenceStrategy(strategy).withMetrics(LockMetrics.none()).build();
                lockSide.createLockTable(Duration.ofSeconds(30));
                LockClient locks = locks(lockSide);
                Counter counter = new Counter(SHARED, fenced, Dynamo.newResourceTable(SHARED, "rewind"), 0);
                long last = 0;
                for (int i = 1; i <= 3; i++) {
                    last = incrementUnderLock(locks, counter).fence().value();
                }
                server.kill();
                server.restart();
                assertThat(lockSide.createLockTable(Duration.ofSeconds(30))).as("the table was gone").isTrue();
                long lastBefore = last;
                Lease lease = locks.acquire("counter", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow();
                try {
                    WriteOutcome outcome = counter.write(counter.read() + 1, lease.fence());
                    if (strategy == FenceStrategy.DENSE) {
                        assertThat(lease.fence().value()).as("a dense counter starts again").isEqualTo(1);
                        assertThat(outcome).as("%s: refused, the resource holds fence %d", strategy, last)
                                .isInstanceOfSatisfying(WriteOutcome.Stale.class, s -> assertThat(s.currentFence()).isEqualTo(lastBefore));
                    } else {
                        assertThat(lease.fence().value()).as("a clock-floored fence is above the lost ones").isGreaterThan(last);
                        assertThat(outcome).isInstanceOf(WriteOutcome.Applied.class);
                        assertThat(counter.read()).isEqualTo(4);
                    }
                } finally {
                    locks.release(lease);
                }
            }
        } finally {
            server.close();
        }
    }

    private static Lease incrementUnderLock(LockClient locks, Counter counter) throws InterruptedException {
        Lease lease = locks.acquire("counter", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow();
        try {
            counter.claim(lease.fence()).orThrow();
            counter.write(counter.read() + 1, lease.fence()).orThrow();
            return lease;
        } finally {
            locks.release(lease);
        }
    }
}
