package dev.fenceguard.firestore;

import static dev.fenceguard.firestore.HorizonClock.MINUTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.WriteOutcome.Stale;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** Rule 1 and the tombstone purge of docs/fence-lifecycle.md on Firestore, one writer at a time (races: {@link FirestorePurgeRaceTest}). */
class FirestoreHorizonTest {

    static final Duration H = Duration.ofHours(1);
    static final Duration M = Duration.ofMinutes(5);

    private static final Firestore DB = Emulator.newProject("horizon");
    private static final HorizonClock.Metrics METRICS = new HorizonClock.Metrics();
    private static final FenceGuardFirestore GUARD = FenceGuardFirestore.builder(DB).withHorizon(H).withClockMargin(M)
            .withMetrics(METRICS).build();
    private static final FencedFirestore FENCED = GUARD.fencedWrites();

    @AfterAll
    static void close() throws Exception {
        DB.close();
    }

    private static void assertBelowHorizon(WriteOutcome outcome, long fence, long horizonBefore) {
        assertThat(outcome).isInstanceOf(Stale.class);
        Stale s = (Stale) outcome;
        assertThat(s.reason()).isEqualTo(Stale.Reason.BELOW_HORIZON);
        assertThat(s.presentedFence()).isEqualTo(fence);
        assertThat(s.currentFence()).as("the horizon, read after the one the test read").isGreaterThanOrEqualTo(horizonBefore)
                .isLessThan(horizonBefore + MINUTE);
        assertThatThrownBy(outcome::orThrow).isInstanceOf(StaleFenceException.class).hasMessageContaining("BELOW_HORIZON");
    }

    private static Map<String, Object> data(DocumentReference doc) throws Exception {
        return doc.get().get().getData();
    }

    private static void tombstone(DocumentReference doc, long fence) throws Exception {
        doc.set(Map.of("_fence", fence, "_deleted", true)).get();
    }

    private static void live(DocumentReference doc, long fence) throws Exception {
        doc.set(Map.of("status", "live", "_fence", fence)).get();
    }

    /** id → fence of every document left in {@code c}, tombstones marked {@code +}. */
    private static Map<String, String> left(CollectionReference c) throws Exception {
        Map<String, String> out = new TreeMap<>();
        for (QueryDocumentSnapshot d : c.get().get().getDocuments()) {
            out.put(d.getId(), d.get("_fence") + (Boolean.TRUE.equals(d.getBoolean("_deleted")) ? "+" : ""));
        }
        return out;
    }

    @Test
    void creatingAnAbsentDocumentAtOrBelowTheHorizonIsStaleInBothFacesAndInATransaction() throws Exception {
        CollectionReference c = DB.collection("create");
        long h = HorizonClock.tickAgo(DB, H);
        int staleBefore = METRICS.stale.get();
        for (long fence : new long[] {h, h - 1, h - 10 * MINUTE, 1}) {
            FenceToken old = FenceToken.of(fence);
            assertBelowHorizon(FENCED.set(c.document("set"), old, Map.of("status", "zombie")), fence, h);
            assertBelowHorizon(FENCED.claim(c.document("claim"), old), fence, h);
            assertBelowHorizon(FENCED.delete(c.document("delete"), old), fence, h);
            assertBelowHorizon(FENCED.async().set(c.document("set"), old, Map.of("status", "zombie")).toCompletableFuture().get(), fence, h);
            assertBelowHorizon(FENCED.async().claim(c.document("claim"), old).toCompletableFuture().get(), fence, h);
            assertBelowHorizon(FENCED.async().delete(c.document("delete"), old).toCompletableFuture().get(), fence, h);
            List<WriteOutcome> inTx = DB.runTransaction(tx -> List.of(FENCED.check(tx, c.document("check"), old),
                    FENCED.set(tx, c.document("set-tx"), old, Map.of("a", 1)))).get();
            inTx.forEach(o -> assertBelowHorizon(o, fence, h));
            assertBelowHorizon(DB.runTransaction(tx -> FENCED.delete(tx, c.document("delete-tx"), old)).get(), fence, h);
            // an update creates nothing, so the horizon does not apply to it
            assertThat(FENCED.update(c.document("update"), old, Map.of("a", 1))).isInstanceOf(WriteOutcome.NotFound.class);
        }
        assertThat(left(c)).as("nothing created").isEmpty();
        assertThat(METRICS.stale.get() - staleBefore).as("each counted as a stale write").isEqualTo(4 * 9);

        FenceToken young = FenceToken.of(h + MINUTE); // a minute above the horizon read just before
        assertThat(FENCED.set(c.document("set"), young, Map.of("status", "new"))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(FENCED.claim(c.document("claim"), young)).isInstanceOf(WriteOutcome.NotFound.class);
        assertThat(FENCED.delete(c.document("delete"), young)).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(DB.runTransaction(tx -> FENCED.check(tx, c.document("check"), young)).get()).isInstanceOf(WriteOutcome.NotFound.class);
        String y = String.valueOf(young.value());
        assertThat(left(c)).containsExactlyInAnyOrderEntriesOf(Map.of("set", y, "claim", y + "+", "delete", y + "+", "check", y + "+"));
    }

    @Test
    void writesThatFindADocumentFollowTheWriteRuleAlone() throws Exception {
        CollectionReference c = DB.collection("found");
        live(c.document("live"), 0);
        tombstone(c.document("dead"), 5);
        assertThat(FENCED.update(c.document("live"), FenceToken.of(3), Map.of("a", 1))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(FENCED.set(c.document("live"), FenceToken.of(4), Map.of("a", 2))).isInstanceOf(WriteOutcome.Applied.class);
        Stale older = (Stale) FENCED.set(c.document("live"), FenceToken.of(2), Map.of("a", 0));
        assertThat(older.reason()).isEqualTo(Stale.Reason.NEWER_FENCE);
        assertThat(older.currentFence()).isEqualTo(4);
        // a tombstone is a record: an old fence it admits revives it, one it refuses is plain Stale
        assertThat(((Stale) FENCED.set(c.document("dead"), FenceToken.of(4), Map.of("a", 0))).reason()).isEqualTo(Stale.Reason.NEWER_FENCE);
        assertThat(FENCED.claim(c.document("dead"), FenceToken.of(6))).isInstanceOf(WriteOutcome.NotFound.class);
        assertThat(FENCED.delete(c.document("dead"), FenceToken.of(7))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(FENCED.set(c.document("dead"), FenceToken.of(8), Map.of("a", 3))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(left(c)).isEqualTo(Map.of("live", "4", "dead", "8"));
    }

    @Test
    void withoutAHorizonOldFencesStillCreateAndThePurgeIsRefused() throws Exception {
        FencedFirestore plain = FenceGuardFirestore.builder(DB).withMetrics(METRICS).build().fencedWrites();
        CollectionReference c = DB.collection("plain");
        assertThat(plain.set(c.document("a"), FenceToken.of(1), Map.of("a", 1))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(plain.delete(c.document("b"), FenceToken.of(1))).isInstanceOf(WriteOutcome.Applied.class);
        assertThatThrownBy(() -> plain.purge(c, Purge.ofDefaults())).isInstanceOf(IllegalStateException.class)
                .hasMessage("purge of plain needs a horizon (FenceGuardFirestore.Builder.withHorizon): without one, a write that"
                        + " finds no document would admit any fence, so no tombstone can be removed safely");
    }

    @Test
    void purgeRemovesExactlyTheTombstonesBelowTheHorizonAndTheMargin() throws Exception {
        CollectionReference c = DB.collection("purge");
        long p = HorizonClock.tickAgo(DB, H.plus(M));
        long h = HorizonClock.tickAgo(DB, H);
        tombstone(c.document("t1"), 1);                  // removable
        tombstone(c.document("t2"), p - MINUTE);         // removable
        tombstone(c.document("t3"), p + MINUTE);         // within the margin: below the horizon, kept
        tombstone(c.document("t4"), h + MINUTE);         // young: kept
        live(c.document("l5"), 0);                       // live documents are never purged, whatever their fence
        live(c.document("l6"), p - MINUTE);
        tombstone(c.document("t7"), p - 2 * MINUTE);     // removable
        c.document("x8").set(Map.of("_fence", 1L, "_deleted", false)).get(); // not a tombstone: kept
        tombstone(DB.collection("elsewhere").document("t9"), 1);            // another collection: kept
        tombstone(c.document("t1").collection("sub").document("t10"), 1);   // a subcollection: kept
        long purgedBefore = METRICS.total("tombstone");

        PurgeResult r = FENCED.purge(c, Purge.ofDefaults().withBatchSize(2));
        assertThat(r.removed()).isEqualTo(3);
        assertThat(r.complete()).isTrue();
        assertThat(r.resumeAfter()).isEmpty();
        assertThat(r.batches()).as("candidates in fence order t1, t7 | t2: the second batch is short").isEqualTo(2);
        assertThat(left(c)).isEqualTo(Map.of("t3", (p + MINUTE) + "+", "t4", (h + MINUTE) + "+", "l5", "0", "l6",
                String.valueOf(p - MINUTE), "x8", "1"));
        assertThat(DB.collection("elsewhere").document("t9").get().get().exists()).isTrue();
        assertThat(c.document("t1").collection("sub").document("t10").get().get().exists()).isTrue();
        assertThat(METRICS.total("tombstone") - purgedBefore).isEqualTo(3);
        assertThat(METRICS.purged).allMatch(e -> e.startsWith("firestore|"));

        // A zombie holding t2's fence would now create the document again: rule 1 refuses it
        Stale zombie = (Stale) FENCED.set(c.document("t2"), FenceToken.of(p - MINUTE + 1), Map.of("status", "zombie"));
        assertThat(zombie.reason()).isEqualTo(Stale.Reason.BELOW_HORIZON);
        assertThat(FENCED.purge(c, Purge.ofDefaults()).removed()).as("a second purge finds nothing more").isZero();
    }

    @Test
    void aPurgeStoppedByItsTimeBoundResumesAfterItsCursor() throws Exception {
        CollectionReference c = DB.collection("resume");
        long p = HorizonClock.tickAgo(DB, H.plus(M));
        for (int i = 0; i < 7; i++) {
            tombstone(c.document("t" + i), p - MINUTE * (1 + i % 3)); // equal fences too: the cursor is (fence, id)
        }
        live(c.document("live"), 1);
        Purge slow = Purge.ofDefaults().withBatchSize(2).withMaxDuration(Duration.ofNanos(1)); // one batch per call
        List<Object> cursors = new ArrayList<>();
        long removed = 0;
        int calls = 0;
        Purge next = slow;
        while (true) {
            PurgeResult r = FENCED.purge(c, next);
            calls++;
            removed += r.removed();
            assertThat(r.batches()).isEqualTo(1);
            if (r.complete()) {
                break;
            }
            Object cursor = r.resumeAfter().orElseThrow();
            assertThat(cursor).isInstanceOf(String.class).asString().matches("\\d+/t\\d");
            cursors.add(cursor);
            next = slow.withStartAfter(cursor);
        }
        assertThat(removed).isEqualTo(7);
        assertThat(calls).as("7 tombstones in batches of 2: four batches, the last one short").isEqualTo(4);
        assertThat(cursors).doesNotHaveDuplicates();
        assertThat(left(c)).isEqualTo(Map.of("live", "1"));
    }

    @Test
    void aResumedPurgeSkipsWhatItsCursorIsPast() throws Exception {
        CollectionReference c = DB.collection("skip");
        long p = HorizonClock.tickAgo(DB, H.plus(M));
        tombstone(c.document("a"), p - 3 * MINUTE);
        tombstone(c.document("b"), p - 2 * MINUTE);
        tombstone(c.document("c"), p - 2 * MINUTE);
        PurgeResult r = FENCED.purge(c, Purge.ofDefaults().withStartAfter((p - 2 * MINUTE) + "/b"));
        assertThat(r.removed()).isEqualTo(1);
        assertThat(left(c)).containsOnlyKeys("a", "b");
    }

    @Test
    void textFencesAreHeldToTheHorizonAndPurgedToo() throws Exception {
        FencedFirestore text = FenceGuardFirestore.builder(DB).withEncoding(FenceEncoding.TEXT).withHorizon(H).withClockMargin(M)
                .withMetrics(METRICS).build().fencedWrites();
        CollectionReference c = DB.collection("text");
        long p = HorizonClock.tickAgo(DB, H.plus(M));
        long h = HorizonClock.tickAgo(DB, H);
        assertThat(((Stale) text.delete(c.document("old"), FenceToken.of(p))).reason()).isEqualTo(Stale.Reason.BELOW_HORIZON);
        c.document("old").set(Map.of("_fence", FenceToken.of(p - MINUTE).toString(), "_deleted", true)).get();
        assertThat(text.delete(c.document("young"), FenceToken.of(h + MINUTE))).isInstanceOf(WriteOutcome.Applied.class);
        assertThat(text.purge(c, Purge.ofDefaults()).removed()).isEqualTo(1);
        assertThat(left(c)).containsOnlyKeys("young");
    }

    @Test
    void badInputIsRefusedBeforeAnyIo() throws Exception {
        // a client of a server that is not there: any I/O would fail (UNAVAILABLE or TIMEOUT), not throw these
        Firestore nowhere = Nowhere.client();
        try {
            FenceGuardFirestore g = FenceGuardFirestore.builder(nowhere).withHorizon(H).build();
            FencedFirestore f = g.fencedWrites();
            CollectionReference orders = nowhere.collection("orders");
            assertThatThrownBy(() -> f.purge(nowhere.collection("fence_guard_locks"), Purge.ofDefaults()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fence-guard's own key space");
            assertThatThrownBy(() -> f.purge(nowhere.collection("fence_guard_idempotency"), Purge.ofDefaults()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fence-guard's own key space");
            for (Object bad : List.<Object>of(5, "abc", "x/y", "-1/a", "1/", "/a", "1/a/b")) {
                assertThatThrownBy(() -> f.purge(orders, Purge.ofDefaults().withStartAfter(bad)))
                        .as("start key %s", bad).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageStartingWith("startAfter of a Firestore purge must be the resumeAfter() of an earlier purge");
                assertThatThrownBy(() -> f.async().purge(orders, Purge.ofDefaults().withStartAfter(bad)))
                        .isInstanceOf(IllegalArgumentException.class);
            }
            assertThatThrownBy(() -> f.purge(null, Purge.ofDefaults())).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> f.purge(orders, null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> FenceGuardFirestore.builder(nowhere).build().fencedWrites().purge(orders, Purge.ofDefaults()))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("needs a horizon");
            assertThatThrownBy(() -> FenceGuardFirestore.builder(nowhere).build().purgeLocks(Purge.ofDefaults()))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("needs CLOCK_FLOORED fences")
                    .hasMessageContaining("DENSE lock documents are never purged");
            assertThatThrownBy(() -> g.purgeLocks(Purge.ofDefaults().withStartAfter("nope")))
                    .isInstanceOf(IllegalArgumentException.class);
        } finally {
            nowhere.close();
        }
    }

    @Test
    void theHorizonSettingsAreCheckedByCoresRules() {
        FenceGuardFirestore.Builder b = FenceGuardFirestore.builder(DB);
        assertThatThrownBy(() -> b.withHorizon(Duration.ofMillis(999))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("horizon must be between 1 s and 3650 days, was PT0.999S");
        assertThatThrownBy(() -> b.withHorizon(null)).isInstanceOf(NullPointerException.class).hasMessage("horizon");
        assertThatThrownBy(() -> b.withClockMargin(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("clockMargin must be between 0 and 1 day, was PT-1S");
        assertThatThrownBy(() -> b.withFenceStrategy(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> FenceGuardFirestore.builder(DB).withHorizon(H)
                .withFenceStrategy(dev.fenceguard.core.FenceStrategy.DENSE).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("withHorizon needs CLOCK_FLOORED fences");
        assertThat(FenceGuardFirestore.builder(DB).withHorizon(H).build().lockBackend().fenceStrategy())
                .as("a horizon makes the own lock clock-floored").isEqualTo(dev.fenceguard.core.FenceStrategy.CLOCK_FLOORED);
        assertThat(FenceGuardFirestore.builder(DB).build().lockBackend().fenceStrategy()).isEqualTo(dev.fenceguard.core.FenceStrategy.DENSE);
        assertThat(GUARD.fencedWrites().toString()).contains("horizon PT1H, clock margin PT5M");
    }

    /** A document read back, for assertions. */
    static Optional<DocumentSnapshot> read(DocumentReference doc) throws Exception {
        DocumentSnapshot s = doc.get().get();
        return s.exists() ? Optional.of(s) : Optional.empty();
    }
}
