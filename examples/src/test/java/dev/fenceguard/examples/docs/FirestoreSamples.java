package dev.fenceguard.examples.docs;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.singleflight.Singleflight;
import dev.fenceguard.firestore.AsyncFencedFirestore;
import dev.fenceguard.firestore.FenceGuardFirestore;
import dev.fenceguard.firestore.FencedFirestore;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/** The samples of docs/firestore.md and of the firestore module's Javadoc; the test gives them an emulator project each. */
final class FirestoreSamples {

    private FirestoreSamples() {}

    /** What the setup sample of docs/firestore.md ends with. */
    record SetUp(Optional<WriteOutcome> paid, CompletionStage<Optional<WriteOutcome>> shipped) {}

    static SetUp docSetUp(Firestore db) throws Exception {
        // docs/firestore.md: setup (begin)
        FenceGuardFirestore fenceGuard = FenceGuardFirestore.builder(db)
                .withLockCollection("fence_guard_locks")     // the default; the fenced writes refuse it
                .build();
        LockClient locks = LockClient.of(fenceGuard.lockBackend());
        FencedFirestore fenced = fenceGuard.fencedWrites();  // fencedWrites(FencePolicy.STRICTLY_NEWER) for once-per-lease writes
        DocumentReference order = db.collection("orders").document("42");

        Optional<WriteOutcome> paid = locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
                lease -> fenced.update(order, lease.fence(), Map.of("status", "paid")).orThrow());            // blocking
        CompletionStage<Optional<WriteOutcome>> shipped = locks.async().withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
                lease -> fenced.async().update(order, lease.fence(), Map.of("status", "shipped"))         // CompletionStage
                        .thenApply(WriteOutcome::orThrow));
        // docs/firestore.md: setup (end)
        return new SetUp(paid, shipped);
    }

    /** What the purge sample of docs/firestore.md removed: tombstones of {@code orders}, then free lock documents. */
    record Purged(PurgeResult tombstones, PurgeResult locks) {}

    static Purged docPurge(Firestore db) {
        // docs/firestore.md: purge with a horizon (begin)
        FenceGuardFirestore fenceGuard = FenceGuardFirestore.builder(db)
                .withHorizon(Duration.ofDays(7))   // creating a document needs a fence above tick(readTime - 7 days)
                .build();                          // clock margin 5 minutes unless withClockMargin; its lock backend is CLOCK_FLOORED
        PurgeResult tombstones = fenceGuard.fencedWrites()
                .purge(db.collection("orders"), Purge.ofDefaults().withBatchSize(500).withMaxDuration(Duration.ofSeconds(10)));
        PurgeResult locks = fenceGuard.purgeLocks(Purge.ofDefaults());   // free lock documents
        // docs/firestore.md: purge with a horizon (end)
        return new Purged(tombstones, locks);
    }

    static void docClaimFirst(LockClient locks, FencedFirestore fenced, DocumentReference order) throws Exception {
        // docs/firestore.md: claim first (begin)
        locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease -> {
            fenced.claim(order, lease.fence()).orThrow();                 // from here on older fences are Stale
            long items = order.get().get().getLong("items");
            return fenced.update(order, lease.fence(), Map.of("items", items + 1)).orThrow();
        });
        // docs/firestore.md: claim first (end)
    }

    static void javadocEntry(Firestore db) throws Exception {
        // dev/fenceguard/firestore/FenceGuardFirestore.java: entry (begin)
        FenceGuardFirestore fenceGuard = FenceGuardFirestore.builder(db).build();
        LockClient locks = LockClient.of(fenceGuard.lockBackend());
        FencedFirestore fenced = fenceGuard.fencedWrites();
        DocumentReference order = db.collection("orders").document("42");
        locks.withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5), lease ->
                fenced.update(order, lease.fence(), Map.of("status", "paid")).orThrow());
        // without blocking: fenced.async().update(order, lease.fence(), Map.of("status", "paid"))
        // dev/fenceguard/firestore/FenceGuardFirestore.java: entry (end)
    }

    static CompletionStage<Optional<WriteOutcome>> javadocAsync(FenceGuardFirestore fenceGuard, LockClient locks, DocumentReference order) {
        // dev/fenceguard/firestore/AsyncFencedFirestore.java: async face (begin)
        AsyncFencedFirestore fenced = fenceGuard.fencedWrites().async();
        CompletionStage<Optional<WriteOutcome>> paid = locks.async().withLock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5),
                lease -> fenced.update(order, lease.fence(), Map.of("status", "paid")));   // empty if the lock was not had
        // dev/fenceguard/firestore/AsyncFencedFirestore.java: async face (end)
        return paid;
    }

    static void javadocFencedWrites(Firestore db, Lease lease) throws Exception {
        // dev/fenceguard/firestore/FencedFirestore.java: fenced writes (begin)
        FenceGuardFirestore fenceGuard = FenceGuardFirestore.builder(db).build();
        FencedFirestore fenced = fenceGuard.fencedWrites();
        DocumentReference order = db.collection("orders").document("42");
        fenced.update(order, lease.fence(), Map.of("status", "paid")).orThrow();
        // inside your own transaction (after your other reads):
        db.runTransaction(tx -> {
            if (fenced.check(tx, order, lease.fence()).isApplied()) { tx.update(order, "status", "shipped"); }
            return null;
        }).get();
        // dev/fenceguard/firestore/FencedFirestore.java: fenced writes (end)
    }

    static LockClient javadocLockBackend(Firestore firestore) {
        // dev/fenceguard/firestore/FirestoreLockBackend.java: lock backend (begin)
        FenceGuardFirestore fenceGuard = FenceGuardFirestore.builder(firestore).withLockCollection("locks").build();
        LockClient locks = LockClient.of(fenceGuard.lockBackend());
        // dev/fenceguard/firestore/FirestoreLockBackend.java: lock backend (end)
        return locks;
    }

    static Singleflight javadocFlightStore(Firestore db, LockClient lockClient) {
        // dev/fenceguard/firestore/FirestoreFlightStore.java: flight store (begin)
        FenceGuardFirestore fenceGuard = FenceGuardFirestore.builder(db).build();
        Singleflight flights = Singleflight.builder(lockClient, fenceGuard.flightStore()).build();
        // dev/fenceguard/firestore/FirestoreFlightStore.java: flight store (end)
        return flights;
    }
}
