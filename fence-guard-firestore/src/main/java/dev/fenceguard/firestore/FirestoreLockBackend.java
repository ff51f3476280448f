package dev.fenceguard.firestore;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.FieldValue;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.firestore.internal.DocumentRule;
import dev.fenceguard.firestore.internal.FirestoreErrors;
import dev.fenceguard.firestore.internal.FirestoreHandle;
import dev.fenceguard.firestore.internal.KeyedDocuments;
import dev.fenceguard.firestore.internal.FirestoreHandle.Step;
import dev.fenceguard.firestore.internal.Purger;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.function.LongConsumer;

/**
 * A lock backend on Google Cloud Firestore: one document per lock key; each operation reads the
 * document and writes it back only if it is unchanged. Get it from {@link FenceGuardFirestore#lockBackend()}.
 *
 * <pre>{@code
 * FenceGuardFirestore fenceGuard = FenceGuardFirestore.builder(firestore).withLockCollection("locks").build();
 * LockClient locks = LockClient.of(fenceGuard.lockBackend());
 * }</pre>
 *
 * <p><b>Clock.</b> Expiry is judged by Firestore's clock, never the client's. A write cannot read the
 * server clock, but every read returns the server's read time, and each operation here writes only
 * if the document is unchanged since its read. So each operation judges "now" as the read time of the
 * snapshot its compare-and-set is based on: acquire takes a lock over a lease whose expiry is not after
 * that instant, and stores {@code readTime + ttl} as the new expiry; extend and release act only on a
 * lease that was live at their read time (extend stores {@code readTime + ttl}); lookup reports a lease
 * live at its read time. Client clocks may be off by any amount without two holders coexisting. The
 * decision is as of the read: an extend whose read saw a live lease may land just after that lease's
 * expiry, which is safe because nobody else can have written the document in between (the write would
 * fail and the extend would re-read). The holder's own view, {@link dev.fenceguard.core.Lease#isValid()},
 * runs on its monotonic clock from the moment the acquire was sent, so it never outlives the server's.
 *
 * <p><b>Document.</b> {@code <collection>/<id>} with fields {@code key} (the lock key),
 * {@code fence} (last fence issued), {@code lockId} and {@code expiresAtMillis} (absent when free),
 * {@code acquiredAtMillis}. Ids are {@code "k" + key} with {@code %} and {@code /} percent-escaped, or
 * {@code "h" + SHA-256(key)} when that would exceed Firestore's 1,500 bytes. Documents are not deleted by a
 * release, so the fence counter survives it; with {@link FenceStrategy#CLOCK_FLOORED} fences
 * ({@link FenceGuardFirestore.Builder#withFenceStrategy}) {@link #purge} removes free documents whose
 * fence the clock floor has passed.
 *
 * <p><b>Atomicity.</b> Each operation is a read followed by a conditional write: {@code create} if the
 * document did not exist, else {@code update} with an update-time precondition from the read. The
 * write succeeds only if nobody changed the document since the read, which is what a read-write
 * transaction on this one document guarantees, in the same two round trips but without the locks a
 * transaction takes (under contention those made the emulator time out waiting for locks). A lost
 * race re-reads and decides again, up to {@link FenceGuardFirestore.Builder#withWriteAttempts} times; an
 * acquire that keeps losing reports the key as held. The fenced writes of the same
 * {@link FenceGuardFirestore} work the same way. Immutable and thread-safe.
 *
 * <p><b>Asynchronous and bounded.</b> Every method returns at once and no thread waits for Firestore:
 * each RPC is sent from the SDK's callback of the one before. The {@code timeout} of a call is one
 * deadline for its whole chain (read, write, re-reads after lost races). Each RPC carries the time
 * left to the server as its gRPC deadline, so Firestore stops working on it then too; at the deadline
 * the RPC still out is cancelled and the stage completes with {@code TIMEOUT}. That deadline is the
 * backend's only timer, and it runs on fence-guard's one timer thread ({@code fence-guard-timer}). A
 * timed-out operation may still have taken effect if its write reached the server before the cancel:
 * an acquire then holds the lock until its TTL (its answer never arrives, so nobody can release it), an
 * extend has moved the expiry, a release has freed the lock. A grant that does arrive after the lock
 * client stopped waiting is released by the client (see {@link LockBackend}). The stages complete on
 * the SDK's callback threads or on the {@code fence-guard-timer} thread.
 *
 * @since 0.1
 */
public final class FirestoreLockBackend extends KeyedStore implements LockBackend {

    static final String KEY = "key";
    static final String FENCE = "fence";
    static final String LOCK_ID = "lockId";
    static final String EXPIRES = "expiresAtMillis";
    static final String ACQUIRED = "acquiredAtMillis";
    /** The id of the document warm-ups read: lock documents' ids start with {@code k} or {@code h}, so no lock key maps to it. */
    static final String WARM_UP_ID = "warm-up";

    private final FenceStrategy strategy;
    private final Duration clockMargin;
    private final Duration purgeTimeout;
    private final LongConsumer purged;

    /**
     * @param clockMargin how far Firestore's clock may step back, for {@link #purge}
     * @param purgeTimeout the bound of each RPC chain of a purge
     * @param purged told how many documents each batch of a purge removed
     */
    FirestoreLockBackend(KeyedDocuments documents, FenceStrategy strategy, Duration clockMargin, Duration purgeTimeout,
            LongConsumer purged) {
        super(documents);
        this.strategy = strategy;
        this.clockMargin = clockMargin;
        this.purgeTimeout = purgeTimeout;
        this.purged = purged;
    }

    /**
     * The fence strategy in use ({@link FenceGuardFirestore.Builder#withFenceStrategy}).
     *
     * @since 0.1
     */
    public FenceStrategy fenceStrategy() {
        return strategy;
    }

    @Override
    public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        DocumentReference doc = documents.doc(key);
        return documents.readThenWrite(key, "acquire", timeout, doc, s -> {
            long now = FirestoreHandle.readMillis(s, key.value());
            if (live(s, now)) {
                return Step.finish(Optional.empty());
            }
            long last = s.exists() && s.getLong(FENCE) != null ? s.getLong(FENCE) : 0;
            // CLOCK_FLOORED: the tick after the one this read fell in, so a key whose document was purged (or
            // never existed) starts above every fence issued up to that tick; the write lands later still.
            long fence = strategy == FenceStrategy.DENSE ? last + 1
                    : Math.max(last + 1, DocumentRule.floorBefore(s.getReadTime(), 0, key.value()) + 1);
            if (last >= FenceToken.MAX_VALUE || fence > FenceToken.MAX_VALUE) {
                throw new FenceGuardException(ErrorCode.FENCE_EXHAUSTED, key.value(), "the key has issued its last fence "
                        + last + "; no lock was taken");
            }
            long expires = now + ttl.toMillis();
            Map<String, Object> data = new HashMap<>();
            data.put(KEY, key.value());
            data.put(FENCE, fence);
            data.put(LOCK_ID, lockId.value());
            data.put(EXPIRES, expires);
            data.put(ACQUIRED, now);
            return Step.write(() -> FirestoreHandle.updateIfUnchanged(doc, s, data),
                    Optional.of(new Grant(fence, Instant.ofEpochMilli(expires))));
        }, Optional::empty); // others kept changing the document: it is contended right now
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
        DocumentReference doc = documents.doc(key);
        return documents.readThenWrite(key, "release", timeout, doc, s -> heldBy(s, lockId, FirestoreHandle.readMillis(s, key.value()))
                ? Step.write(() -> FirestoreHandle.updateIfUnchanged(doc, s, Map.of(LOCK_ID, FieldValue.delete(), EXPIRES,
                        FieldValue.delete())), true)
                : Step.finish(false), documents.lostRaces(key, "release"));
    }

    @Override
    public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
        DocumentReference doc = documents.doc(key);
        return documents.readThenWrite(key, "extend", timeout, doc, s -> {
            long now = FirestoreHandle.readMillis(s, key.value());
            if (!heldBy(s, lockId, now)) {
                return Step.finish(Optional.empty());
            }
            long expires = now + ttl.toMillis();
            return Step.write(() -> FirestoreHandle.updateIfUnchanged(doc, s, Map.of(EXPIRES, expires)),
                    Optional.of(Instant.ofEpochMilli(expires)));
        }, documents.lostRaces(key, "extend"));
    }

    @Override
    public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
        return documents.readThenWrite(key, "lookup", timeout, documents.doc(key), s -> Step.finish(live(s, FirestoreHandle.readMillis(s, key.value()))
                ? Optional.of(new LockInfo(key, FenceToken.of(s.getLong(FENCE)), Instant.ofEpochMilli(s.getLong(EXPIRES))))
                : Optional.empty()), Optional::empty);
    }

    /**
     * Gets ready for the first calls: reads the document {@code warm-up} of the lock collection (no
     * lock key maps to it, and nothing writes it) and commits an empty batch, which opens the gRPC
     * channel and loads the SDK's read and commit paths. It takes no lock and writes nothing.
     *
     * @since 0.1
     */
    @Override
    public CompletionStage<Void> warmUp(Duration timeout) {
        return documents.firestore().warmUp(warmUpDocument(), timeout);
    }

    /**
     * {@link FenceGuardFirestore#purgeLocks}, whose Javadoc users read. How: each batch reads Firestore's clock,
     * queries at most the batch size of documents with {@code fence} below the floor a margin ago (the automatic
     * single-field index on {@code fence} serves it) in the order {@code (fence, document id)}, and removes each
     * one by reading it again and deleting it with an update-time precondition, only if it is still free and
     * below the floor of that read's time: an acquisition between the query and the delete keeps the document.
     * The cursor is the text {@code <fence>/<document id>}.
     */
    PurgeResult purge(Purge purge) {
        return FirestoreErrors.join(purgeAsync(purge), documents.collection().getPath(), "purge of lock documents");
    }

    /** {@link #purge} without waiting: the same checks, thrown at once before any I/O; each RPC sent from the callback of the one before. */
    CompletionStage<PurgeResult> purgeAsync(Purge purge) {
        Objects.requireNonNull(purge, "purge");
        if (strategy == FenceStrategy.DENSE) {
            throw new IllegalStateException("purge of lock documents in " + documents + " needs CLOCK_FLOORED fences"
                    + " (FenceGuardFirestore.Builder.withFenceStrategy): a DENSE key whose document is removed starts again"
                    + " from fence 1, which resources already hold, so DENSE lock documents are never purged");
        }
        long margin = clockMargin.toNanos() / 1_000;
        long marginMillis = clockMargin.toMillis();
        Purger purger = new Purger(documents.firestore(), FENCE, f -> f, warmUpDocument(documents), purgeTimeout, "lock document",
                purged);
        return purger.run(documents.collection(), purge, q -> q, now -> ClockFloor.floorAtMicros(now - margin), read -> {
            if (!read.exists()) {
                return false;
            }
            String subject = read.getReference().getPath();
            Long fence = read.getLong(FENCE);
            Long expires = read.getLong(EXPIRES);
            boolean free = read.getString(LOCK_ID) == null || expires == null
                    || expires <= FirestoreHandle.readMillis(read, subject) - marginMillis;
            return free && fence != null && fence < DocumentRule.floorBefore(read.getReadTime(), margin, subject);
        });
    }

    /** The document warm-ups read, never written. */
    DocumentReference warmUpDocument() {
        return warmUpDocument(documents);
    }

    /** The document warm-ups (and purges, for the server's clock) read in {@code locks}, never written. */
    static DocumentReference warmUpDocument(KeyedDocuments locks) {
        return locks.collection().document(WARM_UP_ID);
    }

    /** Held by anyone at server time {@code now}: strictly before the expiry. */
    private static boolean live(DocumentSnapshot s, long now) {
        Long expires = s.exists() ? s.getLong(EXPIRES) : null;
        return expires != null && s.getString(LOCK_ID) != null && now < expires;
    }

    /** Held by {@code lockId} at server time {@code now}. */
    private static boolean heldBy(DocumentSnapshot s, LockId lockId, long now) {
        Long expires = s.exists() ? s.getLong(EXPIRES) : null;
        return expires != null && lockId.value().equals(s.getString(LOCK_ID)) && now < expires;
    }

    @Override
    public String toString() {
        return "FirestoreLockBackend[" + documents + ", " + strategy + "]";
    }
}
