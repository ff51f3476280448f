package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.idempotency.Fingerprint;
import dev.fenceguard.core.leader.AsyncLeaderElection;
import dev.fenceguard.core.leader.LeaderElection;
import dev.fenceguard.core.memory.InMemoryFlightStore;
import dev.fenceguard.core.memory.InMemoryIdempotencyBackend;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.singleflight.ResultCodec;
import dev.fenceguard.core.singleflight.Singleflight;
import dev.fenceguard.examples.docs.CoreJavadocSamples.Gateway;
import dev.fenceguard.examples.docs.CoreSingleflightSamples.Reports;
import dev.fenceguard.jooq.Assignments;
import dev.fenceguard.migrations.FenceGuardMigrations;
import dev.fenceguard.redis.FenceGuardRedis;
import dev.fenceguard.redis.FencedRedis;
import dev.fenceguard.testkit.servers.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.sql.DataSource;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Runs the Javadoc samples of fence-guard-core: SQL on the embedded PostgreSQL, Redis on the test server. */
class CoreJavadocSamplesTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration WAIT = Duration.ofSeconds(5);

    private static DataSource dataSource;
    private static LockClient locks;
    private static CoreJavadocSamples samples;

    @BeforeAll
    static void setUp() {
        dataSource = EmbeddedOrders.dataSource();
        locks = EmbeddedOrders.locks(dataSource);
        samples = new CoreJavadocSamples(dataSource, EmbeddedOrders.orders());
    }

    @BeforeEach
    void newOrder() {
        EmbeddedOrders.setStatus(dataSource, "new");
    }

    @Test
    void asyncLockClientWritesTheStatusToRedisUnderTheLease() {
        String orderId = TestRedis.keyPrefix("javadoc") + "42";
        RedisClient client = RedisClient.create(TestRedis.server().uri().toString());
        try (FenceGuardRedis redis = FenceGuardRedis.builder(client).build();
                StatefulRedisConnection<String, String> connection = client.connect()) {
            FencedRedis fenced = redis.fencedWrites();
            String key = "order:" + orderId + ":status";
            try {
                WriteOutcome outcome = samples.asyncLockClient(new InMemoryLockBackend(), fenced, orderId).toCompletableFuture().join();
                assertThat(outcome).isInstanceOf(WriteOutcome.Applied.class);
                assertThat(connection.sync().get(key)).isEqualTo("paid");
            } finally {
                connection.sync().del(key, fenced.fenceKeyOf(key));
            }
        } finally {
            client.shutdown();
        }
    }

    @Test
    void aLeaseClosedByTryWithResourcesWroteTheOrderAndIsReleased() throws Exception {
        samples.lease(locks);
        assertThat(EmbeddedOrders.status(dataSource)).isEqualTo("paid");
        assertThat(locks.lookup("orders:42")).as("released").isEmpty();
    }

    @Test
    void lockClientOnPostgresWritesTheOrderUnderTheLock() throws Exception {
        samples.lockClient();
        assertThat(EmbeddedOrders.status(dataSource)).isEqualTo("paid");
        assertThat(locks.lookup("orders:42")).as("released").isEmpty();
    }

    @Test
    void lockContextGivesTheLeaseInsideWithLockAndRefusesOutside() throws Exception {
        locks.withLock("orders:42", TTL, WAIT, lease -> {
            samples.shipOrder(42L);
            return "shipped";
        });
        assertThat(EmbeddedOrders.status(dataSource)).isEqualTo("shipped");
        EmbeddedOrders.setStatus(dataSource, "new");
        assertThatThrownBy(() -> samples.shipOrder(42L)).isInstanceOf(IllegalStateException.class);
        assertThat(EmbeddedOrders.status(dataSource)).isEqualTo("new");
    }

    @Test
    void writeOutcomeSwitchSavesRefusesAZombieAndReportsAMissingRow() throws Exception {
        Lease older = locks.acquire("orders:42", TTL, WAIT).orElseThrow();
        older.close();
        try (Lease lease = locks.acquire("orders:42", TTL, WAIT).orElseThrow()) {
            samples.writeOutcome(lease);
            assertThat(EmbeddedOrders.status(dataSource)).isEqualTo("paid");
        }
        EmbeddedOrders.setStatus(dataSource, "new");
        samples.writeOutcome(older);   // Stale: logged, nothing written
        assertThat(EmbeddedOrders.status(dataSource)).isEqualTo("new");

        DSL.using(dataSource, SQLDialect.POSTGRES).execute("DELETE FROM public.orders WHERE id = 42");
        try (Lease lease = locks.acquire("orders:42", TTL, WAIT).orElseThrow()) {
            assertThatThrownBy(() -> samples.writeOutcome(lease)).isInstanceOf(CoreJavadocSamples.OrderMissing.class);
        } finally {
            EmbeddedOrders.dataSource();   // the row back, at fence 0
        }
    }

    @Test
    void asyncIdempotencyStoreChargesOncePerKey() throws Exception {
        InMemoryIdempotencyBackend backend = new InMemoryIdempotencyBackend();
        Gateway gateway = new Gateway();
        LockClient memory = LockClient.of(new InMemoryLockBackend());
        try (Lease lease = memory.acquire("order:o-1", TTL, WAIT).orElseThrow()) {
            String first = CoreJavadocSamples.asyncIdempotencyStore(backend, "shop-o-1-charge", "o-1", "4200", lease, gateway)
                    .toCompletableFuture().join();
            String again = CoreJavadocSamples.asyncIdempotencyStore(backend, "shop-o-1-charge", "o-1", "4200", lease, gateway)
                    .toCompletableFuture().join();
            assertThat(first).isEqualTo("ch_1 (4200)");
            assertThat(again).as("replayed").isEqualTo(first);
        }
        assertThat(gateway.calls).hasValue(1);
    }

    @Test
    void fingerprintsOfTheSamePartsAreEqualAndOfOthersDiffer() {
        Fingerprint fp = CoreJavadocSamples.fingerprint("o-1", 4200, "EUR");
        assertThat(CoreJavadocSamples.fingerprint("o-1", 4200, "EUR")).isEqualTo(fp);
        assertThat(CoreJavadocSamples.fingerprint("o-1", 4201, "EUR")).isNotEqualTo(fp);
    }

    @Test
    void idempotencyKeyNamesTheOperationAndGoesInTheHeader() {
        HttpRequest request = CoreJavadocSamples.idempotencyKey("o-1", "amount=4200&currency=eur");
        HttpRequest retry = CoreJavadocSamples.idempotencyKey("o-1", "amount=4200&currency=eur");
        String key = request.headers().firstValue("Idempotency-Key").orElseThrow();
        assertThat(key).contains("o-1").contains("charge").hasSizeLessThanOrEqualTo(255);
        assertThat(retry.headers().firstValue("Idempotency-Key")).as("deterministic").contains(key);
        assertThat(request.method()).isEqualTo("POST");
    }

    @Test
    void idempotencyStoreUnderALockChargesOnce() throws Exception {
        InMemoryIdempotencyBackend backend = new InMemoryIdempotencyBackend();
        Gateway gateway = new Gateway();
        LockClient memory = LockClient.of(new InMemoryLockBackend());
        CoreJavadocSamples.idempotencyStore(backend, memory, "o-2", "990", gateway);
        CoreJavadocSamples.idempotencyStore(backend, memory, "o-2", "990", gateway);   // a retry: replayed
        assertThat(gateway.calls).hasValue(1);
        assertThat(gateway.charges.values()).containsExactly("ch_1 (990)");
    }

    @Test
    void asyncLeaderElectionStartsAndStopsLeavingNoLeader() {
        LockClient memory = LockClient.of(new InMemoryLockBackend());
        AsyncLeaderElection election = CoreJavadocSamples.asyncLeaderElection(memory);
        assertThat(election.isRunning()).isFalse();
        assertThat(election.isLeader()).isFalse();
        assertThat(LeaderElection.currentLeader(memory, "billing-scheduler")).isEmpty();
    }

    @Test
    void micrometerObservationsSeeTheLockAndTheWrite() throws Exception {
        StoppedObservations seen = new StoppedObservations();
        CoreJavadocSamples.Observed o = CoreJavadocSamples.micrometerLockObservations(seen.registry, locks.backend());
        o.locks().withLock("orders:42", TTL, WAIT, lease -> o.orders().on(dataSource).update(42L, lease.fence(),
                Assignments.of("status", "observed")).orThrow());
        assertThat(EmbeddedOrders.status(dataSource)).isEqualTo("observed");
        assertThat(seen.names).as("the write's and the lock's observations").contains("fenceguard.write")
                .anyMatch(name -> name.startsWith("fenceguard.") && !name.equals("fenceguard.write"));
    }

    @Test
    void asyncSingleflightComputesTheReportOnItsExecutor() {
        Reports reports = new Reports();
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try {
            String report = reports.async(LockClient.of(new InMemoryLockBackend()), new InMemoryFlightStore(), executor)
                    .toCompletableFuture().join();
            assertThat(report).isEqualTo("report 2026-11: 42 orders");
            assertThat(reports.built).hasValue(1);
        } finally {
            executor.shutdown();
        }
    }

    @Test
    void resultCodecCarriesTheResultThroughAFlight() throws Exception {
        ResultCodec<Instant> instants = CoreSingleflightSamples.resultCodec();
        Instant at = Instant.parse("2026-11-26T14:00:00.123Z");
        Singleflight flights = Singleflight.builder(LockClient.of(new InMemoryLockBackend()), new InMemoryFlightStore()).build();
        assertThat(flights.run("clock:1", TTL, instants, lease -> at)).isEqualTo(at);
    }

    @Test
    void singleflightOnPostgresRunsTheWorkAndReturnsItsResult() throws Exception {
        FenceGuardMigrations.singleflightBuilder(dataSource).migrate();
        Reports reports = new Reports();
        assertThat(reports.onPostgres(LockClient.of(new InMemoryLockBackend()), dataSource)).isEqualTo("report 2026-11: 42 orders");
        assertThat(reports.built).hasValue(1);
    }
}
