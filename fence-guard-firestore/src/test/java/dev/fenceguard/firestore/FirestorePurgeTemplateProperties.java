package dev.fenceguard.firestore;

import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.FencePurgeProperties;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The testkit's purge template on Firestore: {@link FencedFirestore#set}, {@code delete}, {@code claim}
 * and {@link FencedFirestore#purge(CollectionReference, Purge)} of a {@link FenceGuardFirestore} built with
 * a horizon of an hour and a clock margin of 5 minutes, the store's clock Firestore's read time (the clock
 * rule 1 and the purge judge by, read as {@link HorizonClock} does). Purges run in batches of 2, so a purge
 * crosses several batches and resumes from its cursor. Each container gets an emulator project of its own;
 * the records are documents of one collection, {@code _fence} and {@code _deleted} as the writes leave them.
 *
 * <p>This runs beside {@link FirestorePurgeProperties}, not instead of it: that one generates whole
 * collections (documents that only look like tombstones, any batch size from 1 to 5) and checks the purge's
 * count, which the template does not.
 */
class FirestorePurgeTemplateProperties extends FencePurgeProperties {

    static final Duration HORIZON = Duration.ofHours(1);
    static final Duration MARGIN = Duration.ofMinutes(5);

    private static Firestore db;
    private static FenceGuardFirestore withHorizon;
    private static FenceGuardFirestore withoutHorizon;

    @BeforeContainer
    static void open() {
        db = Emulator.newProject("purgetemplate");
        withHorizon = FenceGuardFirestore.builder(db).withHorizon(HORIZON).withClockMargin(MARGIN).withMetrics(LockMetrics.none()).build();
        // For the broken variant of FirestorePurgeTemplateTest only: the same writes with no rule 1 (and no purge of its own).
        withoutHorizon = FenceGuardFirestore.builder(db).withMetrics(LockMetrics.none()).build();
    }

    @AfterContainer
    static void close() throws Exception {
        db.close();
    }

    /** The writer under test. */
    FencedFirestore writes() {
        return withHorizon.fencedWrites();
    }

    /** The writer of the broken variant: no horizon. */
    static FencedFirestore writesWithoutHorizon() {
        return withoutHorizon.fencedWrites();
    }

    /** The collection that holds the records. */
    CollectionReference collection() {
        return db.collection("purge-template");
    }

    static Firestore db() {
        return db;
    }

    @Override
    protected Duration horizon() {
        return HORIZON;
    }

    @Override
    protected Duration clockMargin() {
        return MARGIN;
    }

    @Override
    protected Instant storeClock() throws Exception {
        long micros = HorizonClock.serverMicros(db);
        return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
    }

    @Override
    protected WriteOutcome write(String key, FenceToken fence, Pause pause) {
        return writes().set(collection().document(key), fence, Map.of("v", "v" + fence.value()));
    }

    @Override
    protected WriteOutcome delete(String key, FenceToken fence, Pause pause) {
        return writes().delete(collection().document(key), fence);
    }

    @Override
    protected WriteOutcome claim(String key, FenceToken fence, Pause pause) {
        return writes().claim(collection().document(key), fence);
    }

    /** {@link FencedFirestore#purge} in batches of 2, resumed from its cursor until complete. */
    @Override
    protected void purge(Pause pause) throws Exception {
        Purge purge = Purge.ofDefaults().withBatchSize(2);
        PurgeResult r = writes().purge(collection(), purge);
        while (!r.complete()) {
            r = writes().purge(collection(), purge.withStartAfter(r.resumeAfter().orElseThrow()));
        }
    }

    /** The document's {@code _fence}; a tombstone when {@code _deleted} is true. */
    @Override
    protected Optional<FenceRecord> record(String key) throws Exception {
        DocumentSnapshot d = collection().document(key).get().get();
        if (!d.exists()) {
            return Optional.empty();
        }
        Long fence = d.getLong("_fence");
        if (fence == null) {
            throw new IllegalStateException(d.getReference().getPath() + " has no _fence: " + d.getData());
        }
        return Optional.of(new FenceRecord(fence, !Boolean.TRUE.equals(d.getBoolean("_deleted"))));
    }

    /** Written raw, as a fenced write long ago left it: a live document with its fence, or a tombstone. */
    @Override
    protected void plant(String key, FenceRecord record) throws Exception {
        Map<String, Object> data = record.live() ? Map.of("v", "planted", "_fence", record.fence())
                : Map.of("_fence", record.fence(), "_deleted", true);
        collection().document(key).set(data).get();
    }
}
