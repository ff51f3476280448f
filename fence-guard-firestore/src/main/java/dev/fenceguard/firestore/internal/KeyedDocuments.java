package dev.fenceguard.firestore.internal;

import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.firestore.internal.FirestoreHandle.Step;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One top-level collection of documents keyed by lock key (the locks, the idempotency entries, the
 * flights), with the client it is read and written through: the one place that maps a key to its
 * document ({@link DocIds}) and runs a read-then-write on it, so that every backend of this module
 * does both the same way.
 */
public final class KeyedDocuments {

    private final FirestoreHandle firestore;
    private final CollectionReference collection;

    public KeyedDocuments(FirestoreHandle firestore, String collectionId) {
        this.firestore = firestore;
        this.collection = firestore.db().collection(collectionId);
    }

    public FirestoreHandle firestore() {
        return firestore;
    }

    public CollectionReference collection() {
        return collection;
    }

    /** The document of {@code key}. */
    public DocumentReference doc(LockKey key) {
        return collection.document(DocIds.of(key));
    }

    /**
     * The document of {@code key} for operators ({@code documentOf} of each backend).
     *
     * @throws IllegalArgumentException if {@code key} is not a valid lock key
     */
    public DocumentReference documentOf(String key) {
        return doc(LockKey.of(key));
    }

    /** {@link FirestoreHandle#readThenWrite} on {@code doc} (the document of {@code key}), naming {@code key} in errors. */
    public <T> CompletableFuture<T> readThenWrite(LockKey key, String operation, Duration timeout, DocumentReference doc,
            Function<DocumentSnapshot, Step<T>> decide, Supplier<T> contended) {
        return firestore.readThenWrite(key.value(), operation, timeout, doc, decide, contended);
    }

    /** The answer of an {@code operation} on {@code key} that lost every race: fails with {@code UNAVAILABLE}. */
    public <T> Supplier<T> lostRaces(LockKey key, String operation) {
        return () -> firestore.lostRaces(key.value(), operation);
    }

    /** The collection's path, for the backends' {@code toString()}. */
    @Override
    public String toString() {
        return collection.getPath();
    }
}
