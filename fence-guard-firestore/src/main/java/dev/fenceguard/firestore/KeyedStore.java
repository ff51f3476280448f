package dev.fenceguard.firestore;

import com.google.cloud.firestore.DocumentReference;
import dev.fenceguard.firestore.internal.KeyedDocuments;

/**
 * What the three stores of this module (locks, idempotency entries, flights) are alike in: each is one
 * collection of documents keyed by lock key ({@link KeyedDocuments}), named {@code firestore}, and shows
 * operators the document of a key. Each subclass holds only its own operations on its documents.
 */
abstract sealed class KeyedStore permits FirestoreLockBackend, FirestoreIdempotencyBackend, FirestoreFlightStore {

    final KeyedDocuments documents;

    KeyedStore(KeyedDocuments documents) {
        this.documents = documents;
    }

    /** {@code firestore}: the backend name in metrics, observations and errors. */
    public String name() {
        return "firestore";
    }

    /**
     * The document that holds {@code key}'s entry in this store's collection: its lock, its idempotency
     * entry or its flights (for operators).
     *
     * @throws IllegalArgumentException if {@code key} is not a valid lock key
     */
    public DocumentReference documentOf(String key) {
        return documents.documentOf(key);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + documents + "]";
    }
}
