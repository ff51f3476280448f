package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.WriteOutcome.Applied;
import dev.fenceguard.core.WriteOutcome.NotFound;
import dev.fenceguard.core.WriteOutcome.Stale;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

class FencedFirestoreTest {

    private static final Firestore DB = Emulator.newProject("fenced");
    private static final FencedFirestore FENCED = FenceGuardFirestore.builder(DB).withMetrics(LockMetrics.none()).build().fencedWrites();

    @AfterAll
    static void close() throws Exception {
        DB.close();
    }

    private static FenceToken f(long v) {
        return FenceToken.of(v);
    }

    private static Map<String, Object> data(DocumentReference doc) throws Exception {
        return doc.get().get().getData();
    }

    @Test
    void updateAppliesNewerOrEqualAndRejectsOlder() throws Exception {
        DocumentReference doc = DB.collection("orders").document("1");
        doc.set(Map.of("status", "new")).get(); // never fenced: counts as 0
        assertThat(FENCED.update(doc, f(3), Map.of("status", "paid"))).isInstanceOf(Applied.class);
        assertThat(FENCED.update(doc, f(3), Map.of("status", "shipped"))).isInstanceOf(Applied.class);
        assertThat(FENCED.update(doc, f(2), Map.of("status", "zombie")))
                .isEqualTo(new Stale(doc.getPath(), 2, 3, FencePolicy.SAME_OR_NEWER));
        assertThat(data(doc)).containsEntry("status", "shipped").containsEntry("_fence", 3L);
        assertThat(FENCED.update(DB.collection("orders").document("missing"), f(1), Map.of("a", 1))).isInstanceOf(NotFound.class);
    }

    @Test
    void setAndDeleteKeepTombstonesAgainstZombies() throws Exception {
        DocumentReference doc = DB.collection("orders").document("2");
        assertThat(FENCED.set(doc, f(5), Map.of("status", "created"))).isInstanceOf(Applied.class);
        assertThat(FENCED.delete(doc, f(4))).isInstanceOf(Stale.class);
        assertThat(FENCED.delete(doc, f(6))).isInstanceOf(Applied.class);
        assertThat(data(doc)).isEqualTo(Map.of("_fence", 6L, "_deleted", true));
        assertThat(FENCED.set(doc, f(5), Map.of("status", "zombie"))).isInstanceOf(Stale.class);
        assertThat(FENCED.update(doc, f(7), Map.of("status", "x"))).as("update of a tombstone").isInstanceOf(NotFound.class);
        assertThat(FENCED.set(doc, f(7), Map.of("status", "reborn"))).isInstanceOf(Applied.class);
        assertThat(data(doc)).isEqualTo(Map.of("status", "reborn", "_fence", 7L));
    }

    @Test
    void fieldsAreAnyMapOfValuesCopiedWhenTheCallIsMade() throws Exception {
        DocumentReference doc = DB.collection("orders").document("copied");
        Map<String, Long> amounts = new HashMap<>(Map.of("amount", 1250L));
        CompletionStage<WriteOutcome> set = FENCED.async().set(doc, f(1), amounts);
        amounts.put("amount", 1L); // after the call: must change nothing written
        amounts.put("extra", 2L);
        assertThat(set.toCompletableFuture().get()).isInstanceOf(Applied.class);
        assertThat(data(doc)).isEqualTo(Map.of("amount", 1250L, "_fence", 1L));
        Map<String, Long> update = new HashMap<>(Map.of("amount", 1300L));
        CompletionStage<WriteOutcome> updated = FENCED.async().update(doc, f(1), update);
        update.clear();
        assertThat(updated.toCompletableFuture().get()).isInstanceOf(Applied.class);
        assertThat(data(doc)).isEqualTo(Map.of("amount", 1300L, "_fence", 1L));
    }

    private static Map<String, Object> tombstone(long fence) {
        return Map.of("_fence", fence, "_deleted", true);
    }

    private static Stale stale(DocumentReference doc, long presented, long current) {
        return new Stale(doc.getPath(), presented, current, FencePolicy.SAME_OR_NEWER);
    }

    @Test
    void deleteOfAbsentKeyThenStaleCreateIsStale() throws Exception {
        DocumentReference doc = DB.collection("rule").document("deleted-never-existing");
        assertThat(FENCED.delete(doc, f(5))).isEqualTo(new Applied(doc.getPath(), 5));
        assertThat(data(doc)).as("a tombstone holds the fence").isEqualTo(tombstone(5));
        assertThat(FENCED.set(doc, f(4), Map.of("status", "zombie"))).isEqualTo(stale(doc, 4, 5));
        assertThat(data(doc)).as("still absent").isEqualTo(tombstone(5));
        assertThat(FENCED.set(doc, f(5), Map.of("status", "created"))).isEqualTo(new Applied(doc.getPath(), 5));
        assertThat(data(doc)).isEqualTo(Map.of("status", "created", "_fence", 5L));

        DocumentReference other = DB.collection("rule").document("deleted-never-existing-2");
        assertThat(FENCED.delete(other, f(5))).isInstanceOf(Applied.class);
        assertThat(FENCED.set(other, f(6), Map.of("status", "created"))).isInstanceOf(Applied.class);
        assertThat(data(other)).isEqualTo(Map.of("status", "created", "_fence", 6L));
    }

    @Test
    void claimOfAbsentKeyThenStaleCreateIsStale() throws Exception {
        DocumentReference doc = DB.collection("rule").document("claimed-never-existing");
        assertThat(FENCED.claim(doc, f(5))).as("the document does not exist").isEqualTo(new NotFound(doc.getPath()));
        assertThat(data(doc)).as("its tombstone now holds the fence").isEqualTo(tombstone(5));
        assertThat(FENCED.set(doc, f(4), Map.of("status", "zombie"))).isEqualTo(stale(doc, 4, 5));
        assertThat(FENCED.update(doc, f(4), Map.of("status", "zombie"))).isEqualTo(stale(doc, 4, 5));
        assertThat(data(doc)).isEqualTo(tombstone(5));
        assertThat(FENCED.set(doc, f(6), Map.of("status", "created"))).isEqualTo(new Applied(doc.getPath(), 6));
        assertThat(data(doc)).isEqualTo(Map.of("status", "created", "_fence", 6L));
    }

    @Test
    void claimAndDeleteOfATombstoneRaiseItsFenceAndRefuseOlderOnes() throws Exception {
        DocumentReference doc = DB.collection("rule").document("tomb");
        assertThat(FENCED.set(doc, f(2), Map.of("status", "new"))).isInstanceOf(Applied.class);
        assertThat(FENCED.delete(doc, f(5))).isInstanceOf(Applied.class);
        assertThat(FENCED.claim(doc, f(7))).isEqualTo(new NotFound(doc.getPath()));
        assertThat(data(doc)).isEqualTo(tombstone(7));
        assertThat(FENCED.claim(doc, f(6))).isEqualTo(stale(doc, 6, 7));
        assertThat(FENCED.delete(doc, f(6))).isEqualTo(stale(doc, 6, 7));
        assertThat(FENCED.delete(doc, f(9))).isEqualTo(new Applied(doc.getPath(), 9));
        assertThat(data(doc)).isEqualTo(tombstone(9));
        assertThat(FENCED.set(doc, f(8), Map.of("status", "zombie"))).isEqualTo(stale(doc, 8, 9));
        assertThat(data(doc)).isEqualTo(tombstone(9));
    }

    @Test
    void anUpdateOfAnAbsentOrDeletedDocumentRecordsNothing() throws Exception {
        DocumentReference never = DB.collection("rule").document("update-never");
        assertThat(FENCED.update(never, f(5), Map.of("a", 1))).isEqualTo(new NotFound(never.getPath()));
        assertThat(never.get().get().exists()).as("no tombstone from an update").isFalse();
        DocumentReference doc = DB.collection("rule").document("update-tomb");
        assertThat(FENCED.delete(doc, f(5))).isInstanceOf(Applied.class);
        assertThat(FENCED.update(doc, f(7), Map.of("a", 1))).isEqualTo(new NotFound(doc.getPath()));
        assertThat(FENCED.update(doc, f(4), Map.of("a", 1))).isEqualTo(stale(doc, 4, 5));
        assertThat(data(doc)).as("tombstone fence unchanged").isEqualTo(tombstone(5));
    }

    @Test
    void strictPolicyRefusesTheTombstonesOwnFence() throws Exception {
        FencedFirestore strict = FenceGuardFirestore.builder(DB).withMetrics(LockMetrics.none()).build()
                .fencedWrites(FencePolicy.STRICTLY_NEWER);
        DocumentReference doc = DB.collection("rule").document("strict-tomb");
        assertThat(strict.delete(doc, f(5))).isInstanceOf(Applied.class);
        assertThat(strict.delete(doc, f(5))).isInstanceOf(Stale.class);
        assertThat(strict.claim(doc, f(5))).isInstanceOf(Stale.class);
        assertThat(strict.set(doc, f(5), Map.of("a", 1))).isInstanceOf(Stale.class);
        assertThat(data(doc)).isEqualTo(tombstone(5));
        assertThat(strict.claim(doc, f(6))).isInstanceOf(NotFound.class);
        assertThat(strict.set(doc, f(7), Map.of("a", 1))).isInstanceOf(Applied.class);
    }

    @Test
    void strictPolicyAndTextEncoding() throws Exception {
        FencedFirestore strictText = FenceGuardFirestore.builder(DB).withEncoding(FenceEncoding.TEXT).withMetrics(LockMetrics.none())
                .build().fencedWrites(FencePolicy.STRICTLY_NEWER);
        DocumentReference doc = DB.collection("charges").document("c1");
        assertThat(strictText.set(doc, f(42), Map.of("charged", true))).isInstanceOf(Applied.class);
        assertThat(data(doc)).containsEntry("_fence", "000000000000042");
        assertThat(strictText.update(doc, f(42), Map.of("charged", true))).isInstanceOf(Stale.class);
        assertThat(strictText.update(doc, f(9), Map.of("charged", false))).isInstanceOfSatisfying(Stale.class,
                s -> assertThat(s.currentFence()).isEqualTo(42));
        assertThat(strictText.update(doc, f(43), Map.of("refunded", true))).isInstanceOf(Applied.class);
    }

    @Test
    void checkGuardsWritesInsideTheCallersTransaction() throws Exception {
        DocumentReference doc = DB.collection("accounts").document("a");
        doc.set(Map.of("balance", 100L, "_fence", 5L)).get();
        String applied = DB.runTransaction(tx -> {
            if (FENCED.check(tx, doc, f(6)).isApplied()) {
                tx.update(doc, Map.of("balance", 90L));
                return "applied";
            }
            return "refused";
        }).get();
        assertThat(applied).isEqualTo("applied");
        assertThat(data(doc)).containsEntry("balance", 90L).containsEntry("_fence", 6L);
        String zombie = DB.runTransaction(tx -> FENCED.check(tx, doc, f(5)).isApplied() ? "applied" : "refused").get();
        assertThat(zombie).isEqualTo("refused");
        assertThat(data(doc)).containsEntry("balance", 90L).containsEntry("_fence", 6L);
    }

    @Test
    void checkOfAnAbsentDocumentLeavesATombstoneSoAnOlderTransactionCannotCreateIt() throws Exception {
        DocumentReference doc = DB.collection("accounts").document("absent");
        WriteOutcome first = DB.runTransaction(tx -> FENCED.check(tx, doc, f(5))).get();
        assertThat(first).isEqualTo(new NotFound(doc.getPath()));
        assertThat(data(doc)).isEqualTo(tombstone(5));
        WriteOutcome zombie = DB.runTransaction(tx -> FENCED.set(tx, doc, f(4), Map.of("balance", 1L))).get();
        assertThat(zombie).isEqualTo(stale(doc, 4, 5));
        assertThat(DB.runTransaction(tx -> FENCED.check(tx, doc, f(4))).get()).isEqualTo(stale(doc, 4, 5));
        assertThat(data(doc)).isEqualTo(tombstone(5));
        WriteOutcome created = DB.runTransaction(tx -> FENCED.set(tx, doc, f(6), Map.of("balance", 100L))).get();
        assertThat(created).isEqualTo(new Applied(doc.getPath(), 6));
        assertThat(data(doc)).isEqualTo(Map.of("balance", 100L, "_fence", 6L));
    }

    @Test
    void checkOfATombstoneRaisesItsFenceOrRefusesAnOlderOne() throws Exception {
        DocumentReference doc = DB.collection("accounts").document("tomb");
        assertThat(FENCED.delete(doc, f(5))).isInstanceOf(Applied.class);
        assertThat(DB.runTransaction(tx -> FENCED.check(tx, doc, f(4))).get()).isEqualTo(stale(doc, 4, 5));
        assertThat(DB.runTransaction(tx -> FENCED.check(tx, doc, f(6))).get()).isEqualTo(new NotFound(doc.getPath()));
        assertThat(data(doc)).isEqualTo(tombstone(6));
        assertThat(FENCED.set(doc, f(5), Map.of("balance", 1L))).isEqualTo(stale(doc, 5, 6));
    }

    @Test
    void transactionalUpdateAndDeleteFollowTheSameRule() throws Exception {
        DocumentReference doc = DB.collection("accounts").document("tx");
        doc.set(Map.of("balance", 100L, "_fence", 5L)).get();
        assertThat(DB.runTransaction(tx -> FENCED.update(tx, doc, f(4), Map.of("balance", 0L))).get()).isEqualTo(stale(doc, 4, 5));
        assertThat(DB.runTransaction(tx -> FENCED.update(tx, doc, f(5), Map.of("balance", 90L))).get()).isInstanceOf(Applied.class);
        assertThat(DB.runTransaction(tx -> FENCED.delete(tx, doc, f(4))).get()).isEqualTo(stale(doc, 4, 5));
        assertThat(data(doc)).isEqualTo(Map.of("balance", 90L, "_fence", 5L));
        assertThat(DB.runTransaction(tx -> FENCED.delete(tx, doc, f(6))).get()).isInstanceOf(Applied.class);
        assertThat(data(doc)).isEqualTo(tombstone(6));
        assertThat(DB.runTransaction(tx -> FENCED.update(tx, doc, f(7), Map.of("balance", 1L))).get()).isInstanceOf(NotFound.class);
        DocumentReference never = DB.collection("accounts").document("tx-never");
        assertThat(DB.runTransaction(tx -> FENCED.delete(tx, never, f(3))).get()).isInstanceOf(Applied.class);
        assertThat(data(never)).isEqualTo(tombstone(3));
    }

    @Test
    void aZombieIsRefusedEndToEnd() throws Exception {
        LockClient locks = LockClient.builder(FenceGuardFirestore.builder(DB).build().lockBackend())
                .withMetrics(LockMetrics.none()).build();
        DocumentReference order = DB.collection("orders").document("42");
        order.set(Map.of("status", "new")).get();
        Lease a = locks.tryAcquire("orders:42", Duration.ofMillis(500)).orElseThrow();
        // A pauses (it does nothing more until the end); B waits for the lock, which it gets once A's lease has
        // lapsed by the server's clock: a grant after a stall, with no sleep guessing how long that takes.
        Lease b = locks.acquire("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5)).orElseThrow();
        assertThat(b.fence().compareTo(a.fence())).as("the newer holder's fence is higher").isPositive();
        assertThat(FENCED.update(order, b.fence(), Map.of("status", "paid by B"))).isInstanceOf(Applied.class);
        assertThat(FENCED.update(order, a.fence(), Map.of("status", "paid by A"))).isInstanceOf(Stale.class);
        assertThat(data(order)).containsEntry("status", "paid by B");
        assertThat(locks.release(a)).isFalse();
        assertThat(locks.release(b)).isTrue();
    }

    @Test
    void badInputFailsBeforeAnyIo() throws Exception {
        DocumentReference doc = DB.collection("orders").document("bad");
        AsyncFencedFirestore async = FENCED.async();
        assertThatThrownBy(() -> FENCED.update(doc, f(1), Map.of())).hasMessage("fields must not be empty");
        assertThatThrownBy(() -> async.update(doc, f(1), Map.of())).as("the asynchronous face throws at the call")
                .hasMessage("fields must not be empty");
        assertThatThrownBy(() -> FENCED.set(doc, f(1), Map.of("_fence", 9L))).hasMessageContaining("fence-guard sets it");
        assertThatThrownBy(() -> async.set(doc, f(1), Map.of("_fence", 9L))).hasMessageContaining("fence-guard sets it");
        assertThatThrownBy(() -> FENCED.set(doc, f(1), Map.of("_deleted", false))).hasMessageContaining("fence-guard sets it");
        assertThatThrownBy(() -> FENCED.update(doc, f(1), Map.of("_fence.x", 1L))).hasMessageContaining("'_fence.x'");
        assertThatThrownBy(() -> FENCED.update(doc, f(1), Map.of("_deleted.x", 1L))).hasMessageContaining("'_deleted.x'");
        assertThatThrownBy(() -> async.set(doc, f(1), Map.of("a", FieldValue.delete())))
                .hasMessage("a fenced set replaces the whole document: leave field 'a' out instead of passing FieldValue.delete()");
        assertThatThrownBy(() -> async.claim(null, f(1))).isInstanceOf(NullPointerException.class).hasMessage("doc");
        assertThatThrownBy(() -> async.delete(doc, null)).isInstanceOf(NullPointerException.class).hasMessage("fence");
        assertThatThrownBy(() -> async.update(doc, f(1), null)).isInstanceOf(NullPointerException.class).hasMessage("fields");
        assertThatThrownBy(() -> FenceGuardFirestore.builder(DB).withFenceField("_deleted")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("fenceField must be non-empty and differ from deletedField '_deleted', was '_deleted'");
        assertThat(doc.get().get().exists()).as("nothing was written").isFalse();
    }

    @Test
    void aFencedSetReplacesTheDocumentExactlyAsFirestoresSetDoes() throws Exception {
        DocumentReference doc = DB.collection("replace").document("r");
        doc.set(Map.of("old", 1L, "nested", Map.of("x", 1L, "y", 2L), "n", 5L)).get();
        assertThat(FENCED.set(doc, f(1), Map.of("a.b", "literal", "nested", Map.of("x", 3L)))).isInstanceOf(Applied.class);
        assertThat(data(doc)).as("old fields gone, nested map replaced, a dotted name is one field")
                .isEqualTo(Map.of("a.b", "literal", "nested", Map.of("x", 3L), "_fence", 1L));
        doc.update(Map.of("n", 5L)).get();
        assertThat(FENCED.async().set(doc, f(1), Map.of("n", FieldValue.increment(1))).toCompletableFuture().get())
                .isInstanceOf(Applied.class);
        assertThat(data(doc)).as("a transform starts from nothing, as in set()").isEqualTo(Map.of("n", 1L, "_fence", 1L));
        DocumentReference fresh = DB.collection("replace").document("fresh");
        assertThat(FENCED.set(fresh, f(2), Map.of("at", FieldValue.serverTimestamp(), "n", FieldValue.increment(2)))).isInstanceOf(Applied.class);
        assertThat(data(fresh)).containsEntry("n", 2L).containsEntry("_fence", 2L).containsKey("at");
    }

    /** An outcome without its resource, to compare the two faces' outcomes on two documents. */
    private static String outcome(WriteOutcome o) {
        return switch (o) {
            case Applied a -> "Applied(" + a.fence() + ")";
            case Stale s -> "Stale(" + s.presentedFence() + " < " + s.currentFence() + ")";
            case NotFound n -> "NotFound";
        };
    }

    private static DocumentReference prepared(String state, String id) throws Exception {
        DocumentReference doc = DB.collection("faces").document(id);
        switch (state) {
            case "live" -> doc.set(Map.of("status", "new", "_fence", 5L)).get();
            case "tombstone" -> doc.set(tombstone(5)).get();
            default -> { } // never existed
        }
        return doc;
    }

    @Test
    void theAsynchronousFaceGivesTheBlockingFacesOutcomesAndDocuments() throws Exception {
        for (FencePolicy policy : FencePolicy.values()) {
            FencedFirestore fenced = FenceGuardFirestore.builder(DB).withMetrics(LockMetrics.none()).build().fencedWrites(policy);
            for (FencedCall op : FencedCall.values()) {
                for (String state : List.of("live", "tombstone", "never")) {
                    for (long fence = 4; fence <= 6; fence++) { // older, same and newer than the stored 5
                        String id = policy + "-" + op + "-" + state + "-" + fence;
                        DocumentReference viaBlocking = prepared(state, "b-" + id);
                        DocumentReference viaAsync = prepared(state, "a-" + id);
                        WriteOutcome blocking = op.on(fenced, viaBlocking, f(fence));
                        WriteOutcome async = op.on(fenced.async(), viaAsync, f(fence)).toCompletableFuture().get();
                        assertThat(outcome(async)).as(id).isEqualTo(outcome(blocking));
                        assertThat(async.resource()).isEqualTo(viaAsync.getPath());
                        assertThat(viaAsync.get().get().getData()).as(id).isEqualTo(viaBlocking.get().get().getData());
                    }
                }
            }
        }
    }
}
