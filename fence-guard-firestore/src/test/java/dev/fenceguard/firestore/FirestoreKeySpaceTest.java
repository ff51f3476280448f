package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome.Applied;
import dev.fenceguard.core.WriteOutcome.NotFound;
import dev.fenceguard.firestore.internal.LockCollections;
import dev.fenceguard.testkit.servers.Ports;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** Fenced writes never reach a lock's document (issue 17, item 3). */
class FirestoreKeySpaceTest {

    private static final Firestore DB = Emulator.newProject("keyspace");
    private static final Duration TTL = Duration.ofMinutes(5);
    private static final FencedFirestore FENCED = FenceGuardFirestore.builder(DB).withMetrics(LockMetrics.none()).build().fencedWrites();

    @AfterAll
    static void close() throws Exception {
        DB.close();
    }

    private static FenceToken f(long v) {
        return FenceToken.of(v);
    }

    /**
     * Every fenced call on {@code doc}: stand-alone (the blocking and the asynchronous face, whose refusal
     * is thrown at the call, not carried by the stage), then inside a transaction; each expected to be refused.
     */
    private static List<ThrowingCallable> everyOperationOn(FencedFirestore target, DocumentReference doc, FenceToken fence) {
        Map<String, Object> fields = Map.of("fence", 1L, "lockId", "zombie", "expiresAtMillis", 0L);
        return List.of(
                () -> target.set(doc, fence, fields),
                () -> target.update(doc, fence, fields),
                () -> target.delete(doc, fence),
                () -> target.claim(doc, fence),
                () -> target.async().set(doc, fence, fields),
                () -> target.async().update(doc, fence, fields),
                () -> target.async().delete(doc, fence),
                () -> target.async().claim(doc, fence),
                () -> inTransaction(tx -> target.set(tx, doc, fence, fields)),
                () -> inTransaction(tx -> target.update(tx, doc, fence, fields)),
                () -> inTransaction(tx -> target.delete(tx, doc, fence)),
                () -> inTransaction(tx -> target.check(tx, doc, fence)));
    }

    /** Runs {@code work} in a transaction and rethrows what it threw, unwrapped. */
    private static void inTransaction(com.google.cloud.firestore.Transaction.Function<?> work) throws Throwable {
        try {
            DB.runTransaction(work).get();
        } catch (ExecutionException e) {
            throw e.getCause();
        }
    }

    private static void assertEveryOperationRefuses(FencedFirestore target, DocumentReference doc, FenceToken fence) {
        for (ThrowingCallable op : everyOperationOn(target, doc, fence)) {
            assertThatThrownBy(op).as(doc.getPath()).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("fence-guard's own key space")
                    .hasMessageContaining("'" + doc.getPath().substring(0, doc.getPath().indexOf('/')) + "'");
        }
    }

    @Test
    void everyFencedCallOnAHeldLocksDocumentIsRefusedAndItsFenceIsUntouched() throws Exception {
        FirestoreLockBackend backend = FenceGuardFirestore.builder(DB).build().lockBackend();
        LockClient locks = LockClient.of(backend);
        for (int i = 0; i < 4; i++) { // some fences issued, then one held
            locks.release(locks.tryAcquire("orders", TTL).orElseThrow());
        }
        Lease held = locks.tryAcquire("orders", TTL).orElseThrow();
        DocumentReference lockDoc = backend.documentOf("orders");
        Map<String, Object> before = lockDoc.get().get().getData();

        assertEveryOperationRefuses(FENCED, lockDoc, f(1));
        assertEveryOperationRefuses(FENCED, lockDoc, FenceToken.of(held.fence().value() + 1_000));

        assertThat(lockDoc.get().get().getData()).as("the lock document").isEqualTo(before);
        assertThat(locks.lookup("orders")).map(LockInfo::fence).contains(held.fence());
        assertThat(locks.tryAcquire("orders", TTL)).as("still held").isEmpty();
        assertThat(locks.release(held)).isTrue();
        Lease next = locks.tryAcquire("orders", TTL).orElseThrow();
        assertThat(next.fence().value()).as("the counter went on from the held fence").isGreaterThan(held.fence().value());
        locks.release(next);
    }

    @Test
    void aLockDocumentThatDoesNotExistYetIsRefusedToo() throws Exception {
        DocumentReference future = FenceGuardFirestore.builder(DB).build().lockBackend().documentOf("not-yet-locked");
        assertEveryOperationRefuses(FENCED, future, f(900_000_000_000_000L));
        assertThat(future.get().get().exists()).as("no document, so no fence a later acquire would start from").isFalse();
    }

    @Test
    void theDefaultLockCollectionIsTheDocumentedOne() {
        // a storage-layout promise: existing lock documents live there
        assertThat(FenceGuardFirestore.builder(DB).build().lockBackend().documentOf("x").getParent().getId()).isEqualTo("fence_guard_locks");
    }

    @Test
    void theOwnAndTheOtherNamedLockCollectionsAreRefusedAndOnlyThey() throws Exception {
        FenceGuardFirestore fenceGuard = FenceGuardFirestore.builder(DB).withLockCollection("locks_a")
                .withOtherLockCollections("locks_b").withMetrics(LockMetrics.none()).build();
        FirestoreLockBackend a = fenceGuard.lockBackend();
        FirestoreLockBackend b = FenceGuardFirestore.builder(DB).withLockCollection("locks_b").build().lockBackend();
        FencedFirestore fenced = fenceGuard.fencedWrites();
        LockClient la = LockClient.of(a);
        Lease lease = la.tryAcquire("k", TTL).orElseThrow();
        assertEveryOperationRefuses(fenced, a.documentOf("k"), f(99));
        assertEveryOperationRefuses(fenced, b.documentOf("k"), f(99));
        assertThat(la.lookup("k")).map(LockInfo::fence).contains(lease.fence());
        la.release(lease);

        DocumentReference plain = DB.collection(LockCollections.DEFAULT).document("resource");
        assertThat(fenced.set(plain, f(1), Map.of("a", 1))).as("the default is no longer a lock collection here")
                .isInstanceOf(Applied.class);
        assertEveryOperationRefuses(FENCED, plain, f(1));
    }

    @Test
    void bothPoliciesRefuseTheLockCollectionAndNamingNoOtherCollectionsKeepsTheOwnOneRefused() throws Exception {
        FenceGuardFirestore fenceGuard = FenceGuardFirestore.builder(DB).withOtherLockCollections().withMetrics(LockMetrics.none()).build();
        DocumentReference lockDoc = fenceGuard.lockBackend().documentOf("orders");
        for (FencePolicy policy : FencePolicy.values()) {
            assertEveryOperationRefuses(fenceGuard.fencedWrites(policy), lockDoc, f(1));
        }
        DocumentReference other = DB.collection("locks_elsewhere").document("korders");
        assertThat(fenceGuard.fencedWrites().claim(other, f(1))).as("a collection nobody named").isInstanceOf(NotFound.class);
        assertThat(other.get().get().getData()).isEqualTo(Map.of("_fence", 1L, "_deleted", true));
    }

    @Test
    void documentsBeneathALockDocumentAreRefused() throws Exception {
        FirestoreLockBackend backend = FenceGuardFirestore.builder(DB).build().lockBackend();
        DocumentReference lockDoc = backend.documentOf("parent");
        assertEveryOperationRefuses(FENCED, lockDoc.collection("audit").document("1"), f(1));
        assertEveryOperationRefuses(FENCED, lockDoc.collection(LockCollections.DEFAULT).document("kparent"), f(1));
        assertEveryOperationRefuses(FENCED, DB.collection(LockCollections.DEFAULT).document("x").collection("y").document("z")
                .collection("w").document("v"), f(1));
    }

    @Test
    void aNestedCollectionNamedLikeALockCollectionIsAnOrdinaryResource() throws Exception {
        FirestoreLockBackend backend = FenceGuardFirestore.builder(DB).build().lockBackend();
        LockClient locks = LockClient.of(backend);
        Lease held = locks.tryAcquire("nested", TTL).orElseThrow();
        DocumentReference lockDoc = backend.documentOf("nested");
        Map<String, Object> before = lockDoc.get().get().getData();
        // same collection id and document id as the lock's, one level down: a different document
        DocumentReference lookalike = DB.collection("tenants").document("t1").collection(LockCollections.DEFAULT)
                .document(lockDoc.getId());
        assertThat(FENCED.set(lookalike, f(1), Map.of("status", "new"))).isInstanceOf(Applied.class);
        assertThat(FENCED.claim(lookalike, f(2))).isInstanceOf(Applied.class);
        assertThat(FENCED.delete(lookalike, f(3))).isInstanceOf(Applied.class);
        assertThat(lookalike.get().get().getData()).as("its own tombstone").isEqualTo(Map.of("_fence", 3L, "_deleted", true));
        assertThat(FENCED.set(lookalike, f(3), Map.of("status", "back"))).as("writing its own tombstone").isInstanceOf(Applied.class);
        for (String name : List.of("fence_guard_locks_archive", "Fence_guard_locks", "fence_guard_lock", " fence_guard_locks")) {
            assertThat(FENCED.set(DB.collection(name).document(lockDoc.getId()), f(1), Map.of("a", 1))).as(name)
                    .isInstanceOf(Applied.class);
        }
        assertThat(lockDoc.get().get().getData()).isEqualTo(before);
        assertThat(locks.release(held)).isTrue();
    }

    @Test
    void refusalComesBeforeAnyIo() throws Exception {
        // nothing listens on this port: a call that did any I/O would fail with UNAVAILABLE or hang, never throw this
        try (Firestore nowhere = FirestoreOptions.newBuilder().setProjectId("keyspace-offline").setEmulatorHost("127.0.0.1:" + Ports.refused())
                .setCredentials(new FirestoreOptions.EmulatorCredentials()).build().getService()) {
            FencedFirestore fenced = FenceGuardFirestore.builder(nowhere).build().fencedWrites();
            DocumentReference lockDoc = nowhere.collection(LockCollections.DEFAULT).document("korders");
            // the bound only makes a regression fail in a minute rather than after the SDK's retries
            assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
                for (ThrowingCallable op : everyOperationOn(fenced, lockDoc, f(1)).subList(0, 8)) { // the stand-alone calls
                    assertThatThrownBy(op).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fence-guard's own key space");
                }
            });
        }
    }

    @Test
    void lockCollectionNamesMustBeCollectionIds() {
        FenceGuardFirestore.Builder builder = FenceGuardFirestore.builder(DB);
        for (String bad : List.of("", "a/b", ".", "..", "__x__", "x".repeat(1501))) {
            assertThatThrownBy(() -> builder.withOtherLockCollections("ok", bad)).as("'%s'", bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("otherLockCollections must be a single Firestore collection id");
            assertThatThrownBy(() -> builder.withLockCollection(bad)).as("'%s'", bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lockCollection must be a single Firestore collection id");
        }
        assertThatThrownBy(() -> builder.withOtherLockCollections("ok", null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> builder.withOtherLockCollections((String[]) null)).isInstanceOf(NullPointerException.class);
    }
}
