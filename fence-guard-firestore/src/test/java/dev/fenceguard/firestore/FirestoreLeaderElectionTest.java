package dev.fenceguard.firestore;

import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LeaderElectionContract;
import java.util.Map;

/** Leader election on the Firestore emulator, the leaders' writes fenced by {@link FencedFirestore} (a fenced set). */
class FirestoreLeaderElectionTest extends LeaderElectionContract {

    private static final Firestore DB = Emulator.newProject("election");
    private static final FenceGuardFirestore FIRESTORE = FenceGuardFirestore.builder(DB).withMetrics(LockMetrics.none()).build();

    @Override
    protected LockBackend backend() {
        return FIRESTORE.lockBackend();
    }

    @Override
    protected WriteOutcome write(String resource, FenceToken term) {
        // a document id must not contain '/': the contract's names use ':' only
        return FIRESTORE.fencedWrites().set(DB.collection("jobs").document(resource), term, Map.of("lastRun", "term " + term.value()));
    }
}
