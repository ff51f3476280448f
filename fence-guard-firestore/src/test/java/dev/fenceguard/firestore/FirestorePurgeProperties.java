package dev.fenceguard.firestore;

import static dev.fenceguard.firestore.HorizonClock.MINUTE;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.firestore.WriteBatch;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.WriteOutcome;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * Generated collections of tombstones, live documents and documents that only look like tombstones, with
 * fences on both sides of the purge horizon and the horizon: one purge (any batch size, resumed until
 * complete) removes exactly the tombstones below {@code tick(readTime - H - M)}, and afterwards every
 * fence at or below a removed one is refused where it would create the document again (rule 1).
 */
class FirestorePurgeProperties {

    private static final Duration H = Duration.ofHours(1);
    private static final Duration M = Duration.ofMinutes(5);
    private static final Firestore DB = Emulator.newProject("purgeprops");
    private static final FencedFirestore FENCED = FenceGuardFirestore.builder(DB).withHorizon(H).withClockMargin(M)
            .withMetrics(new HorizonClock.Metrics()).build().fencedWrites();
    private static final AtomicInteger RUN = new AtomicInteger();

    @AfterContainer
    static void close() throws Exception {
        DB.close();
    }

    /** What a generated document is. */
    enum Kind { TOMBSTONE, LIVE, NOT_DELETED }

    /** Where its fence lies: far below the purge horizon, just below it, within the margin, above the horizon. */
    enum Age {
        ANCIENT, BELOW_PURGE, WITHIN_MARGIN, YOUNG;

        long fence(long purgeHorizon, long horizon, int jitter) {
            return switch (this) {
                case ANCIENT -> 1 + jitter;
                case BELOW_PURGE -> purgeHorizon - MINUTE - jitter;
                case WITHIN_MARGIN -> purgeHorizon + MINUTE + jitter;
                case YOUNG -> horizon + MINUTE + jitter;
            };
        }
    }

    record Spec(Kind kind, Age age, int jitter) {}

    @Provide
    Arbitrary<List<Spec>> docs() {
        return Combinators.combine(Arbitraries.of(Kind.class), Arbitraries.of(Age.class), Arbitraries.integers().between(0, 3))
                .as(Spec::new).list().ofMaxSize(12);
    }

    @Property(tries = 25)
    void onePurgeRemovesExactlyWhatTheRuleAllows(@ForAll("docs") List<Spec> specs, @ForAll @IntRange(min = 1, max = 5) int batch)
            throws Exception {
        CollectionReference c = DB.collection("run" + RUN.incrementAndGet());
        long p = HorizonClock.tickAgo(DB, H.plus(M));
        long h = HorizonClock.tickAgo(DB, H);
        Map<String, Long> expectedLeft = new HashMap<>();
        Map<String, Long> removable = new HashMap<>();
        WriteBatch write = DB.batch();
        for (int i = 0; i < specs.size(); i++) {
            Spec s = specs.get(i);
            String id = "d" + i;
            long fence = s.age().fence(p, h, s.jitter());
            Map<String, Object> data = switch (s.kind()) {
                case TOMBSTONE -> Map.of("_fence", fence, "_deleted", true);
                case LIVE -> Map.of("_fence", fence, "v", i);
                case NOT_DELETED -> Map.of("_fence", fence, "_deleted", false);
            };
            write.set(c.document(id), data);
            boolean goes = s.kind() == Kind.TOMBSTONE && (s.age() == Age.ANCIENT || s.age() == Age.BELOW_PURGE);
            (goes ? removable : expectedLeft).put(id, fence);
        }
        if (!specs.isEmpty()) {
            write.commit().get();
        }

        Purge purge = Purge.ofDefaults().withBatchSize(batch);
        PurgeResult r = FENCED.purge(c, purge);
        long removed = r.removed();
        while (!r.complete()) { // a slow machine may hit the 10 s bound: go on from the cursor
            r = FENCED.purge(c, purge.withStartAfter(r.resumeAfter().orElseThrow()));
            removed += r.removed();
        }
        assertThat(removed).isEqualTo(removable.size());
        Map<String, Long> left = new HashMap<>();
        for (QueryDocumentSnapshot d : c.get().get().getDocuments()) {
            left.put(d.getId(), d.getLong("_fence"));
        }
        assertThat(left).isEqualTo(expectedLeft);
        for (Map.Entry<String, Long> gone : removable.entrySet()) {
            WriteOutcome zombie = FENCED.set(c.document(gone.getKey()), FenceToken.of(gone.getValue()), Map.of("v", "zombie"));
            assertThat(zombie).isInstanceOfSatisfying(WriteOutcome.Stale.class,
                    s -> assertThat(s.reason()).isEqualTo(WriteOutcome.Stale.Reason.BELOW_HORIZON));
        }
    }
}
