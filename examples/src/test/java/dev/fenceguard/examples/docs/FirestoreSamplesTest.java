package dev.fenceguard.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.singleflight.ResultCodec;
import dev.fenceguard.firestore.FenceGuardFirestore;
import dev.fenceguard.testkit.servers.TestFirestore;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Runs the samples of docs/firestore.md and of the firestore module's Javadoc on the emulator, a project per test. */
class FirestoreSamplesTest {

    private Firestore db;
    private DocumentReference order;
    private FenceGuardFirestore fenceGuard;
    private LockClient locks;

    @BeforeEach
    void newProject() throws Exception {
        db = FirestoreOptions.newBuilder()
                .setProjectId(TestFirestore.newProjectId("samples"))
                .setEmulatorHost(TestFirestore.server().hostPort())
                .setCredentials(new FirestoreOptions.EmulatorCredentials())
                .build()
                .getService();
        order = db.collection("orders").document("42");
        order.set(Map.of("status", "new", "items", 2)).get();
        fenceGuard = FenceGuardFirestore.builder(db).build();
        locks = LockClient.of(fenceGuard.lockBackend());
    }

    @AfterEach
    void close() throws Exception {
        db.close();
    }

    private DocumentSnapshot order() throws Exception {
        return order.get().get();
    }

    private static long fenceOf(WriteOutcome outcome) {
        return ((WriteOutcome.Applied) outcome).fence();
    }

    @Test
    void purgeSampleRemovesOldTombstonesAndFreeLockDocuments() throws Exception {
        long eightDaysAgo = (System.currentTimeMillis() - Duration.ofDays(8).toMillis() - 1_735_689_600_000L) * 100;
        db.collection("orders").document("gone").set(Map.of("_fence", eightDaysAgo, "_deleted", true)).get();
        db.collection("orders").document("young").set(Map.of("_fence", eightDaysAgo * 2, "_deleted", true)).get();
        FenceGuardFirestore floored = FenceGuardFirestore.builder(db).withHorizon(Duration.ofDays(7)).build();
        floored.lockBackend().documentOf("old").set(Map.of("key", "old", "fence", eightDaysAgo, "acquiredAtMillis", 0L)).get();
        FirestoreSamples.Purged r = FirestoreSamples.docPurge(db);
        assertThat(r.tombstones().removed()).isEqualTo(1);
        assertThat(r.locks().removed()).isEqualTo(1);
        assertThat(db.collection("orders").document("gone").get().get().exists()).isFalse();
        assertThat(db.collection("orders").document("young").get().get().exists()).isTrue();
        assertThat(order().exists()).as("live documents stay").isTrue();
    }

    @Test
    void setUpSampleWritesBothFacesUnderTheLockWithRisingFences() throws Exception {
        FirestoreSamples.SetUp r = FirestoreSamples.docSetUp(db);
        long paid = fenceOf(r.paid().orElseThrow());
        long shipped = fenceOf(r.shipped().toCompletableFuture().join().orElseThrow());
        assertThat(shipped).isGreaterThan(paid);
        assertThat(order().getString("status")).isEqualTo("shipped");
        assertThat(order().getLong("_fence")).isEqualTo(shipped);
    }

    @Test
    void claimFirstSampleAddsAnItemAndShutsOutTheZombie() throws Exception {
        Lease zombie = locks.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow();
        zombie.close();   // its holder stalls past the lease; the sample takes the lock after it
        FirestoreSamples.docClaimFirst(locks, fenceGuard.fencedWrites(), order);
        assertThat(order().getLong("items")).isEqualTo(3L);
        assertThat(fenceGuard.fencedWrites().update(order, zombie.fence(), Map.of("items", 0))).isInstanceOf(WriteOutcome.Stale.class);
        assertThat(order().getLong("items")).isEqualTo(3L);
    }

    @Test
    void entrySampleMarksTheOrderPaidWithAFence() throws Exception {
        FirestoreSamples.javadocEntry(db);
        assertThat(order().getString("status")).isEqualTo("paid");
        assertThat(order().getLong("_fence")).isPositive();
        assertThat(locks.lookup("orders:42")).as("released").isEmpty();
    }

    @Test
    void asyncSampleMarksTheOrderPaid() throws Exception {
        WriteOutcome outcome = FirestoreSamples.javadocAsync(fenceGuard, locks, order).toCompletableFuture().join().orElseThrow();
        assertThat(outcome).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(order().getString("status")).isEqualTo("paid");
    }

    @Test
    void fencedWritesSampleWritesAloneAndInATransactionAndRefusesAZombie() throws Exception {
        Lease older = locks.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow();
        older.close();
        try (Lease lease = locks.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow()) {
            FirestoreSamples.javadocFencedWrites(db, lease);
            assertThat(order().getString("status")).isEqualTo("shipped");
            assertThat(order().getLong("_fence")).isEqualTo(lease.fence().value());
        }
        assertThatThrownBy(() -> FirestoreSamples.javadocFencedWrites(db, older)).isInstanceOf(StaleFenceException.class);
        assertThat(order().getString("status")).isEqualTo("shipped");
    }

    @Test
    void lockBackendSampleKeepsItsLocksInTheNamedCollection() throws Exception {
        LockClient sampleLocks = FirestoreSamples.javadocLockBackend(db);
        try (Lease lease = sampleLocks.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow()) {
            assertThat(db.collection("locks").document("korders:42").get().get().getLong("fence")).isEqualTo(lease.fence().value());
            assertThat(sampleLocks.tryAcquire("orders:42", Duration.ofSeconds(30))).as("held").isEmpty();
        }
    }

    @Test
    void flightStoreSampleRunsAFlightOnce() throws Exception {
        SingleflightSamples.RateProvider provider = new SingleflightSamples.RateProvider();
        String rates = FirestoreSamples.javadocFlightStore(db, locks)
                .run("rates:2026-11-23", Duration.ofSeconds(20), ResultCodec.utf8(), lease -> provider.fetch());
        assertThat(rates).isEqualTo("EUR/USD 1.0842");
        assertThat(provider.calls).hasValue(1);
        assertThat(fenceGuard.flightStore().documentOf("rates:2026-11-23").get().get().exists()).isTrue();
    }
}
