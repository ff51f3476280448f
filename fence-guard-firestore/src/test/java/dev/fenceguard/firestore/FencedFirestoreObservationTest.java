package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Transaction;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.LockObservations;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.micrometer.MicrometerLockObservations;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Fenced writes on the Firestore emulator as {@code fenceguard.write} observations, nested under {@code withLock}. */
@Timeout(120) // a guard against a hang, not a timing assertion
class FencedFirestoreObservationTest {

    private static final Firestore DB = Emulator.newProject("observed");
    private static final Duration TTL = Duration.ofSeconds(30);
    private static final FenceToken HIGHEST = FenceToken.of(900_000_000_000_000L);
    private static final String LOCK_KEY = "inventory-lock-4711";
    private static final String DOC_ID = "order-7f3a";

    private final TestObservationRegistry registry = TestObservationRegistry.create();
    private final LockObservations observations = MicrometerLockObservations.of(registry);

    @AfterAll
    static void close() throws Exception {
        DB.close();
    }

    private FenceGuardFirestore fenceGuard(LockObservations observations) {
        return FenceGuardFirestore.builder(DB).withMetrics(LockMetrics.none()).withObservations(observations).build();
    }

    private LockClient locks(FenceGuardFirestore fenceGuard) {
        return LockClient.builder(fenceGuard.lockBackend()).withMetrics(LockMetrics.none()).withObservations(observations).build();
    }

    /** A document of collection {@code orders} under a tenant, named like the tests' other keys. */
    private static DocumentReference order(String test, String id) {
        return DB.collection("tenants").document("t-" + test).collection("orders").document(id);
    }

    @Test
    void everyFencedWriteInsideWithLockIsAChildOfItWithItsCollectionOperationAndOutcome() throws Exception {
        FenceGuardFirestore fenceGuard = fenceGuard(observations);
        FencedFirestore fenced = fenceGuard.fencedWrites();
        DocumentReference doc = order("nested", DOC_ID);
        DocumentReference newer = order("nested", "order-newer");
        doc.set(Map.of("status", "new")).get();
        newer.set(Map.of("status", "new", "_fence", HIGHEST.value())).get(); // a newer holder's document
        List<String> lockIds = new ArrayList<>();
        List<FenceToken> fences = new ArrayList<>();
        locks(fenceGuard).withLock(LOCK_KEY, TTL, Duration.ZERO, lease -> {
            lockIds.add(lease.lockId().value());
            FenceToken fence = lease.fence();
            fences.add(fence);
            assertThat(fenced.claim(doc, fence)).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(fenced.update(doc, fence, Map.of("status", "paid"))).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(fenced.update(newer, fence, Map.of("status", "zombie"))).isInstanceOf(WriteOutcome.Stale.class);
            assertThat(fenced.set(doc, fence, Map.of("status", "shipped"))).isInstanceOf(WriteOutcome.Applied.class);
            assertThat(fenced.async().delete(doc, fence).toCompletableFuture().get())
                    .as("the asynchronous face, started on the work's thread").isInstanceOf(WriteOutcome.Applied.class);
            return "done";
        });

        assertThat(writes()).containsExactly(
                "orders claim applied fenceguard.with.lock",
                "orders update applied fenceguard.with.lock",
                "orders update stale fenceguard.with.lock",
                "orders set applied fenceguard.with.lock",
                "orders delete applied fenceguard.with.lock");
        TestObservationRegistryAssert.assertThat(registry)
                .forAllObservationsWithNameEqualTo(LockObservations.WRITE, o -> o.hasLowCardinalityKeyValue("backend", "firestore")
                        .hasHighCardinalityKeyValue("fence", Long.toString(fences.getFirst().value())));
        List<String> recorded = new ArrayList<>();
        TestObservationRegistryAssert.assertThat(registry).hasHandledContextsThatSatisfy(contexts -> contexts.forEach(c -> {
            recorded.add(c.getName());
            recorded.add(String.valueOf(c.getContextualName()));
            c.getAllKeyValues().forEach(kv -> recorded.add(kv.getKey() + "=" + kv.getValue()));
        }));
        assertThat(recorded).as("names and key values").isNotEmpty()
                .noneMatch(v -> v.contains(lockIds.getFirst()) || v.contains(LOCK_KEY) || v.contains(DOC_ID) || v.contains("t-nested"));
    }

    @Test
    void callsInTheCallersTransactionAreObservedUnderWhatIsCurrentOnTheTransactionsThread() throws Exception {
        FencedFirestore fenced = fenceGuard(observations).fencedWrites();
        DocumentReference doc = order("tx", DOC_ID);
        DocumentReference newer = order("tx", "order-newer");
        newer.set(Map.of("status", "new", "_fence", HIGHEST.value())).get();
        FenceToken fence = FenceToken.of(7);
        Observation request = Observation.start("http.request", registry);
        assertThat(inTransaction(request, tx -> fenced.set(tx, doc, fence, Map.of("status", "new")))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(inTransaction(request, tx -> fenced.check(tx, doc, fence))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(inTransaction(request, tx -> fenced.update(tx, doc, fence, Map.of("status", "paid")))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(inTransaction(request, tx -> fenced.delete(tx, newer, fence))).isInstanceOf(WriteOutcome.Stale.class);
        request.stop();

        assertThat(writes()).containsExactly(
                "orders set applied http.request",
                "orders check applied http.request",
                "orders update applied http.request",
                "orders delete stale http.request");
        assertThat(doc.get().get().getData()).containsEntry("status", "paid");
    }

    @Test
    void writesWithoutObservationsObserveNothingEvenInsideAnObservedWithLock() throws Exception {
        FenceGuardFirestore fenceGuard = fenceGuard(LockObservations.none());
        DocumentReference doc = order("unobserved", DOC_ID);
        locks(fenceGuard).withLock(LOCK_KEY, TTL, Duration.ZERO,
                lease -> fenceGuard.fencedWrites().set(doc, lease.fence(), Map.of("status", "new")).orThrow());

        TestObservationRegistryAssert.assertThat(registry)
                .hasHandledContextsThatSatisfy(contexts -> assertThat(contexts).extracting(Observation.Context::getName)
                        .contains("fenceguard.with.lock", "fenceguard.acquire", "fenceguard.release")
                        .doesNotContain(LockObservations.WRITE));
        assertThat(doc.get().get().getString("status")).isEqualTo("new");
    }

    @Test
    void argumentsRefusedBeforeAnyIoAreNotObserved() {
        FencedFirestore fenced = fenceGuard(observations).fencedWrites();
        DocumentReference lockDocument = DB.collection("fence_guard_locks").document("x");
        assertThatThrownBy(() -> fenced.claim(lockDocument, HIGHEST)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> fenced.async().update(order("refused", DOC_ID), HIGHEST, Map.of()))
                .isInstanceOf(IllegalArgumentException.class);
        TestObservationRegistryAssert.assertThat(registry).doesNotHaveAnyObservation();
    }

    /** {@code call} in a transaction of its own, with {@code current} made current on the transaction's thread. */
    private static WriteOutcome inTransaction(Observation current, Function<Transaction, WriteOutcome> call) throws Exception {
        return DB.runTransaction(tx -> {
            try (Observation.Scope scope = current.openScope()) {
                return call.apply(tx);
            }
        }).get();
    }

    /** Each write observation as "resource.type operation outcome parent". */
    private List<String> writes() {
        List<String> seen = new ArrayList<>();
        TestObservationRegistryAssert.assertThat(registry)
                .hasHandledContextsThatSatisfy(contexts -> contexts.stream().filter(c -> c.getName().equals(LockObservations.WRITE))
                        .forEach(c -> seen.add(c.getLowCardinalityKeyValue("resource.type").getValue() + " "
                                + c.getLowCardinalityKeyValue("operation").getValue() + " "
                                + c.getLowCardinalityKeyValue("outcome").getValue() + " "
                                + (c.getParentObservation() == null ? "no parent" : c.getParentObservation().getContextView().getName()))));
        return seen;
    }
}
