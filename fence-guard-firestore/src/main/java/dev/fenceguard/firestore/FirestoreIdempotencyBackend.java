package dev.fenceguard.firestore;

import com.google.cloud.firestore.Blob;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Precondition;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.cloud.firestore.WriteBatch;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyEntry;
import dev.fenceguard.core.spi.IdempotencyRules;
import dev.fenceguard.core.spi.IdempotencyState;
import dev.fenceguard.firestore.internal.BoundedCall;
import dev.fenceguard.firestore.internal.FirestoreHandle;
import dev.fenceguard.firestore.internal.KeyedDocuments;
import dev.fenceguard.firestore.internal.FirestoreHandle.Step;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;

/**
 * An idempotency backend on Google Cloud Firestore, one document per key, for a
 * {@link dev.fenceguard.core.idempotency.IdempotencyStore}. Get it from
 * {@link FenceGuardFirestore#idempotencyBackend()}.
 *
 * <p><b>Document.</b> {@code <collection>/<id>} (ids as for the lock documents) with fields {@code key},
 * {@code state} ({@code P C R F}), {@code fingerprint}, {@code fence}, {@code expiresAtMillis} (claim
 * expiry, or when the outcome was recorded), {@code retainUntilMillis} and {@code result} (bytes).
 *
 * <p><b>Atomicity and clock</b> as for {@link FirestoreLockBackend}: claim and record each read the
 * document and write it back only if it is unchanged since the read (a lost race reads again), and
 * apply {@link IdempotencyRules} with the snapshot's read time as "now". Lookup reads. Purge queries
 * at most {@code limit} documents whose retention has passed (by the query's read time) and deletes
 * them in one batch, each only if unchanged since the query; if any changed, the batch deletes nothing
 * and answers 0 (the next purge tries again).
 *
 * <p>Asynchronous and bounded like the lock backend. Immutable and thread-safe.
 *
 * @since 0.1
 */
public final class FirestoreIdempotencyBackend extends KeyedStore implements IdempotencyBackend {

    static final String KEY = "key";
    static final String STATE = "state";
    static final String FINGERPRINT = "fingerprint";
    static final String FENCE = "fence";
    static final String EXPIRES = "expiresAtMillis";
    static final String RETAIN = "retainUntilMillis";
    static final String RESULT = "result";

    FirestoreIdempotencyBackend(KeyedDocuments documents) {
        super(documents);
    }

    @Override
    public CompletionStage<IdempotencyEntry> claim(LockKey key, String fingerprint, long fence, Duration ttl, Duration retention,
            Duration timeout) {
        DocumentReference doc = documents.doc(key);
        return documents.readThenWrite(key, "idempotency claim", timeout, doc, s -> {
            Optional<IdempotencyEntry> current = entry(s, key);
            IdempotencyEntry next = IdempotencyRules.claim(current, fingerprint, fence, ttl, retention, now(s, key));
            return current.isPresent() && current.get() == next ? Step.finish(next)
                    : Step.write(() -> FirestoreHandle.updateIfUnchanged(doc, s, data(key, next)), next);
        }, documents.lostRaces(key, "idempotency claim"));
    }

    @Override
    public CompletionStage<OptionalLong> record(LockKey key, long fence, IdempotencyState state, byte[] result, Duration retention,
            Duration timeout) {
        DocumentReference doc = documents.doc(key);
        return documents.readThenWrite(key, "idempotency record", timeout, doc, s -> {
            Optional<IdempotencyEntry> current = entry(s, key);
            Instant now = now(s, key);
            Optional<IdempotencyEntry> next = IdempotencyRules.record(current, fence, state, result, retention, now);
            return next.isEmpty() ? Step.finish(OptionalLong.of(IdempotencyRules.currentFence(current, now)))
                    : Step.write(() -> FirestoreHandle.updateIfUnchanged(doc, s, data(key, next.get())), OptionalLong.empty());
        }, documents.lostRaces(key, "idempotency record"));
    }

    @Override
    public CompletionStage<Optional<IdempotencyEntry>> lookup(LockKey key, Duration timeout) {
        return documents.readThenWrite(key, "idempotency lookup", timeout, documents.doc(key), s -> {
            Instant now = now(s, key);
            return Step.finish(entry(s, key).filter(e -> now.isBefore(e.retainUntil())));
        }, Optional::empty);
    }

    @Override
    public CompletionStage<Integer> purge(int limit, Duration timeout) {
        String subject = "collection " + documents.collection().getId();
        // The client's clock only narrows the query; each document is judged by the query's read time.
        long clientNow = System.currentTimeMillis();
        return BoundedCall.<Integer>start(subject, "idempotency purge", timeout, call -> call.send(
                () -> documents.collection().whereLessThanOrEqualTo(RETAIN, clientNow).limit(limit).get(), snapshot -> {
                    long now = FirestoreHandle.readMillis(snapshot.getReadTime(), subject);
                    WriteBatch batch = documents.firestore().db().batch();
                    int n = 0;
                    for (QueryDocumentSnapshot d : snapshot.getDocuments()) {
                        Long retain = d.getLong(RETAIN);
                        if (retain != null && retain <= now) {
                            batch.delete(d.getReference(), Precondition.updatedAt(d.getUpdateTime()));
                            n++;
                        }
                    }
                    if (n == 0) {
                        call.complete(0);
                        return;
                    }
                    int deleted = n;
                    call.sendConditional(batch::commit, applied -> call.complete(applied ? deleted : 0));
                }));
    }

    private static Map<String, Object> data(LockKey key, IdempotencyEntry e) {
        Map<String, Object> data = new HashMap<>();
        data.put(KEY, key.value());
        data.put(STATE, String.valueOf(e.state().code()));
        data.put(FINGERPRINT, e.fingerprint());
        data.put(FENCE, e.fence());
        data.put(EXPIRES, e.expiresAt().toEpochMilli());
        data.put(RETAIN, e.retainUntil().toEpochMilli());
        data.put(RESULT, Blob.fromBytes(e.result()));
        return data;
    }

    /** The stored entry, even if its retention has passed (the rules treat it as absent then). */
    private static Optional<IdempotencyEntry> entry(DocumentSnapshot s, LockKey key) {
        if (!s.exists()) {
            return Optional.empty();
        }
        String state = s.getString(STATE);
        String fingerprint = s.getString(FINGERPRINT);
        Long fence = s.getLong(FENCE);
        Long expires = s.getLong(EXPIRES);
        Long retain = s.getLong(RETAIN);
        Blob result = s.getBlob(RESULT);
        if (state == null || state.length() != 1 || fingerprint == null || fence == null || expires == null || retain == null
                || result == null) {
            throw new FenceGuardException(ErrorCode.INTERNAL, key.value(), "the idempotency document of this key is not in "
                    + "fence-guard's format");
        }
        return Optional.of(new IdempotencyEntry(IdempotencyState.ofCode(state.charAt(0)), fingerprint, fence,
                Instant.ofEpochMilli(expires), Instant.ofEpochMilli(retain), result.toBytes()));
    }

    /** The server's clock at the read (see {@link FirestoreHandle#readMillis(DocumentSnapshot, String)}), as the rules take it. */
    private static Instant now(DocumentSnapshot s, LockKey key) {
        return Instant.ofEpochMilli(FirestoreHandle.readMillis(s, key.value()));
    }

    static List<String> fields() {
        return List.of(KEY, STATE, FINGERPRINT, FENCE, EXPIRES, RETAIN, RESULT);
    }
}
