package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.testkit.ZombieStorm;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The zombie storm on the Firestore lock backend with FencedFirestore. Size: 60 attempts, or
 * {@code -Dfenceguard.storm.attempts=N} for a soak. The emulator takes tens of milliseconds per
 * transaction, so a soak splits its size into storms of at most {@value FirestoreStorms#MAX_PER_STORM}
 * attempts, each on its own lock key and counter document (each a full storm with its own workers and
 * zombies), run in parallel; every one must be safe.
 */
class FirestoreZombieStormTest {

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLost() throws Exception {
        int size = ZombieStorm.attemptsProperty(60);
        Firestore db = Emulator.newProject("storm");
        try {
            List<ZombieStorm.Result> results = FirestoreStorms.inParallel(size, (i, share) -> {
                FenceGuardFirestore guard = FenceGuardFirestore.builder(db).withMetrics(LockMetrics.none()).build();
                ZombieStorm.FencedCounter counter = FirestoreStorms.counter(guard.fencedWrites(), db.collection("counters").document("c" + i));
                return FirestoreStorms.storm(guard.lockBackend(), "c" + i, counter, share).build()::run;
            });
            long attempts = 0;
            long stalls = 0;
            for (int i = 0; i < results.size(); i++) {
                ZombieStorm.Result r = results.get(i);
                System.out.println("STORM firestore (" + (i + 1) + " of " + results.size() + " in parallel): " + r.summary());
                r.requireSafe();
                attempts += r.attempts();
                stalls += r.stalls();
            }
            assertThat(attempts).isEqualTo(size);
            assertThat(stalls).isPositive();
        } finally {
            db.close();
        }
    }
}
