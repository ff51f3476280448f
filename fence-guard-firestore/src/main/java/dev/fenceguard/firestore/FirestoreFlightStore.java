package dev.fenceguard.firestore;

import com.google.cloud.firestore.Blob;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.ListenerRegistration;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.firestore.internal.FirestoreErrors;
import dev.fenceguard.firestore.internal.FirestoreHandle;
import dev.fenceguard.firestore.internal.KeyedDocuments;
import dev.fenceguard.firestore.internal.FirestoreHandle.Step;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The {@link FlightStore} of {@link dev.fenceguard.core.singleflight.Singleflight} on Firestore: one
 * document per flight key, each operation a read and a write conditioned on the document being
 * unchanged (as {@link FirestoreLockBackend} works), retention judged by the read time of the snapshot
 * each decision is based on (Firestore's clock, never the client's). Get it from
 * {@link FenceGuardFirestore#flightStore()}.
 *
 * <pre>{@code
 * FenceGuardFirestore fenceGuard = FenceGuardFirestore.builder(db).build();
 * Singleflight flights = Singleflight.builder(lockClient, fenceGuard.flightStore()).build();
 * }</pre>
 *
 * <p><b>Document.</b> {@code <collection>/<id>} (ids as for locks: {@code "k"} + the escaped key, or a
 * hash when too long) with fields {@code key}, {@code flightFence} (the newest flight begun; kept, so a
 * zombie is refused even after the result expired), {@code result} (bytes), {@code resultFence},
 * {@code resultExpiresAtMillis}, and {@code wakes} (a counter a failed flight bumps). The collection is
 * {@link FenceGuardFirestore.Builder#withFlightCollection}, default {@code fence_guard_flights}; the
 * fenced writes of the same entry refuse documents in it. Documents are small: a result must fit
 * Firestore's 1 MiB per document.
 *
 * <p><b>Notification.</b> Waiters listen to their flight's document with a snapshot listener: a publish
 * or a wake changes the document and wakes them. The watch counts as in place once the listener's
 * first snapshot has arrived. Immutable and thread-safe; it shares the client, the attempts and the
 * read-then-conditional-write of the {@link FenceGuardFirestore} it came from.
 *
 * @since 0.1
 */
public final class FirestoreFlightStore extends KeyedStore implements FlightStore {

    static final String KEY = "key";
    static final String FLIGHT_FENCE = "flightFence";
    static final String RESULT = "result";
    static final String RESULT_FENCE = "resultFence";
    static final String EXPIRES = "resultExpiresAtMillis";
    static final String WAKES = "wakes";

    FirestoreFlightStore(KeyedDocuments documents) {
        super(documents);
    }

    @Override
    public CompletionStage<Optional<FlightResult>> read(LockKey key, Duration timeout) {
        return documents.readThenWrite(key, "singleflight read", timeout, documents.doc(key),
                s -> Step.finish(retained(s, key)), Optional::empty);
    }

    @Override
    public CompletionStage<FlightStart> begin(LockKey key, long fence, Duration timeout) {
        DocumentReference doc = documents.doc(key);
        return documents.readThenWrite(key, "singleflight begin", timeout, doc, s -> {
            Optional<FlightResult> kept = retained(s, key);
            if (kept.isPresent()) {
                return Step.finish(new FlightStart.Retained(kept.get()));
            }
            long newest = newest(s);
            if (newest > fence) {
                return Step.finish(new FlightStart.Superseded(newest));
            }
            Map<String, Object> data = new HashMap<>();
            data.put(KEY, key.value());
            data.put(FLIGHT_FENCE, fence);
            if (s.exists()) {
                data.put(RESULT, FieldValue.delete());
                data.put(RESULT_FENCE, FieldValue.delete());
                data.put(EXPIRES, FieldValue.delete());
            }
            return Step.write(() -> FirestoreHandle.updateIfUnchanged(doc, s, data), (FlightStart) new FlightStart.Started());
        }, documents.lostRaces(key, "singleflight begin"));
    }

    @Override
    public CompletionStage<WriteOutcome> publish(LockKey key, long fence, byte[] result, Duration retention, Duration timeout) {
        DocumentReference doc = documents.doc(key);
        String resource = doc.getPath();
        return documents.readThenWrite(key, "singleflight publish", timeout, doc, s -> {
            long newest = newest(s);
            if (newest > fence) {
                return Step.finish(new WriteOutcome.Stale(resource, fence, newest, FencePolicy.SAME_OR_NEWER));
            }
            Map<String, Object> data = new HashMap<>();
            data.put(KEY, key.value());
            data.put(FLIGHT_FENCE, fence);
            data.put(RESULT, Blob.fromBytes(result));
            data.put(RESULT_FENCE, fence);
            data.put(EXPIRES, FirestoreHandle.readMillis(s, key.value()) + retention.toMillis());
            return Step.write(() -> FirestoreHandle.updateIfUnchanged(doc, s, data), (WriteOutcome) new WriteOutcome.Applied(resource, fence));
        }, documents.lostRaces(key, "singleflight publish"));
    }

    @Override
    public CompletionStage<Void> wake(LockKey key, Duration timeout) {
        DocumentReference doc = documents.doc(key);
        return documents.readThenWrite(key, "singleflight wake", timeout, doc, s -> Step.write(() -> s.exists()
                ? doc.update(WAKES, FieldValue.increment(1))
                : doc.create(Map.of(KEY, key.value(), WAKES, 1L)), (Void) null), documents.lostRaces(key, "singleflight wake"));
    }

    @Override
    public CompletionStage<FlightWatch> watch(LockKey key, Runnable onChange) {
        Objects.requireNonNull(onChange, "onChange");
        CompletableFuture<FlightWatch> listening = new CompletableFuture<>();
        AtomicBoolean first = new AtomicBoolean(true);
        ListenerRegistration[] registration = new ListenerRegistration[1];
        registration[0] = documents.doc(key).addSnapshotListener((snapshot, error) -> {
            if (first.getAndSet(false)) {
                // The first snapshot is the state when the listen took hold: from here on, changes reach us.
                if (error != null) {
                    listening.completeExceptionally(FirestoreErrors.failure(error, key.value(), "singleflight listen"));
                } else {
                    listening.complete(() -> registration[0].remove());
                }
            } else {
                onChange.run(); // a change, or a broken listen: look again either way
            }
        });
        return listening;
    }

    private static long newest(DocumentSnapshot s) {
        Long f = s.exists() ? s.getLong(FLIGHT_FENCE) : null;
        return f == null ? 0 : f;
    }

    private static Optional<FlightResult> retained(DocumentSnapshot s, LockKey key) {
        if (!s.exists()) {
            return Optional.empty();
        }
        Blob result = s.getBlob(RESULT);
        Long expires = s.getLong(EXPIRES);
        Long fence = s.getLong(RESULT_FENCE);
        if (result == null || expires == null || fence == null || FirestoreHandle.readMillis(s, key.value()) >= expires) {
            return Optional.empty();
        }
        return Optional.of(new FlightResult(fence, result.toBytes()));
    }
}
