package dev.fenceguard.firestore;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.FencedResourceProperties;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The fenced-resource template on FencedFirestore update, set and delete (tombstones) over the emulator,
 * through the blocking face; {@link FirestoreAsyncFencedResourceProperties} runs it through the asynchronous face.
 */
class FirestoreFencedResourceProperties extends FencedResourceProperties {

    static final Firestore DB = Emulator.newProject("resprops");
    static final FencedFirestore FENCED = FenceGuardFirestore.builder(DB).withMetrics(LockMetrics.none()).build().fencedWrites();

    static DocumentReference doc(String id) {
        return DB.collection("resources").document(id);
    }

    @Override
    protected void create(String id) throws Exception {
        doc(id).set(Map.of("value", initialValue())).get();
    }

    @Override
    protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) throws Exception {
        return FENCED.update(doc(id), fence, Map.of("value", value));
    }

    @Override
    protected WriteOutcome upsert(String id, FenceToken fence, String value, Pause pause) throws Exception {
        return FENCED.set(doc(id), fence, Map.of("value", value));
    }

    @Override
    protected WriteOutcome delete(String id, FenceToken fence, Pause pause) throws Exception {
        return FENCED.delete(doc(id), fence);
    }

    @Override
    protected Set<Operation> operations() {
        return EnumSet.allOf(Operation.class);
    }

    @Override
    protected Optional<String> read(String id) throws Exception {
        DocumentSnapshot doc = doc(id).get().get();
        return doc.exists() && !Boolean.TRUE.equals(doc.getBoolean("_deleted")) ? Optional.ofNullable(doc.getString("value"))
                : Optional.empty();
    }
}
