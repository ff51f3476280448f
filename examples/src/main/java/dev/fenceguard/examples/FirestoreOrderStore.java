package dev.fenceguard.examples;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.firestore.FenceGuardFirestore;
import dev.fenceguard.firestore.FencedFirestore;
import java.util.Map;
import java.util.UUID;

/**
 * The demo's lock and order in the Firestore emulator, in a project id of its own. The order is a
 * document in {@code orders}; the fenced write is {@link FencedFirestore#update}, the naive one a plain
 * {@code update}.
 */
final class FirestoreOrderStore extends OrderStore {

    private final Firestore db;
    private final FencedFirestore guard;

    private FirestoreOrderStore(String emulatorHost, Firestore db, FenceGuardFirestore fenceGuard) {
        super("Firestore emulator at " + emulatorHost, fenceGuard.lockBackend(), fenceGuard.idempotencyBackend());
        this.db = db;
        this.guard = fenceGuard.fencedWrites();
    }

    /** Connects to the emulator at {@code HOST:PORT}. */
    static FirestoreOrderStore open(String emulatorHost) {
        Firestore db = FirestoreOptions.newBuilder().setProjectId("fence-guard-demo-" + UUID.randomUUID().toString().substring(0, 8))
                .setEmulatorHost(emulatorHost).setCredentials(new FirestoreOptions.EmulatorCredentials()).build().getService();
        return new FirestoreOrderStore(emulatorHost, db, FenceGuardFirestore.builder(db).withMetrics(LockMetrics.none()).build());
    }

    @Override
    void createOrder(String id) throws Exception {
        doc(id).set(Map.of("status", "new")).get();
    }

    @Override
    WriteOutcome writeStatus(String id, String status, FenceToken fence, boolean fenced) throws Exception {
        if (fenced) {
            return guard.update(doc(id), fence, Map.of("status", status));
        }
        doc(id).update(Map.of("status", status)).get();
        return new WriteOutcome.Applied(doc(id).getPath(), fence.value());
    }

    @Override
    String readStatus(String id) throws Exception {
        return doc(id).get().get().getString("status");
    }

    private DocumentReference doc(String id) {
        return db.collection("orders").document(id);
    }

    @Override
    public void close() throws Exception {
        db.close();
    }
}
