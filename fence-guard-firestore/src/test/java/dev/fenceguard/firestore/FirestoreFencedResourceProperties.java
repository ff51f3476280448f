package dev.fenceguard.firestore;

import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.FencedResourceProperties;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.Optional;

/** The fenced-resource template on FencedFirestore update, set and delete (tombstones) over the emulator. */
class FirestoreFencedResourceProperties extends FencedResourceProperties {

    private static final Firestore DB = Emulator.newProject("resprops");
    private static final FencedFirestore FENCED = FencedFirestore.builder(DB).withMetrics(LockMetrics.none()).build();

    @Override
    protected void create(String id) throws Exception {
        DB.collection("resources").document(id).set(Map.of("value", initialValue())).get();
    }

    @Override
    protected WriteOutcome write(String id, FenceToken fence, String value, Pause pause) {
        return FENCED.update(DB.collection("resources").document(id), fence, Map.of("value", value));
    }

    @Override
    protected WriteOutcome upsert(String id, FenceToken fence, String value, Pause pause) {
        return FENCED.set(DB.collection("resources").document(id), fence, Map.of("value", value));
    }

    @Override
    protected WriteOutcome delete(String id, FenceToken fence, Pause pause) {
        return FENCED.delete(DB.collection("resources").document(id), fence);
    }

    @Override
    protected Set<Operation> operations() {
        return EnumSet.allOf(Operation.class);
    }

    @Override
    protected Optional<String> read(String id) throws Exception {
        DocumentSnapshot doc = DB.collection("resources").document(id).get().get();
        return doc.exists() && !Boolean.TRUE.equals(doc.getBoolean("_deleted")) ? Optional.ofNullable(doc.getString("value"))
                : Optional.empty();
    }
}
