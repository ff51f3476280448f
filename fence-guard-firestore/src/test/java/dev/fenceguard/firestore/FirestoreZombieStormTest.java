package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.ZombieStorm;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The zombie storm on the Firestore lock backend with FencedFirestore. */
class FirestoreZombieStormTest {

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLost() throws Exception {
        Firestore db = Emulator.newProject("storm");
        DocumentReference counter = db.collection("counters").document("c");
        counter.set(Map.of("n", 0L)).get();
        FencedFirestore fenced = FencedFirestore.builder(db).withMetrics(LockMetrics.none()).build();
        LockClient locks = LockClient.builder(FirestoreLockBackend.builder(db).build())
                .withMetrics(LockMetrics.none()).build();
        ZombieStorm.Result r = ZombieStorm.builder(locks, "counter:c", new ZombieStorm.FencedCounter() {
            @Override
            public WriteOutcome claim(FenceToken fence) {
                return fenced.claim(counter, fence);
            }

            @Override
            public long read() throws Exception {
                return counter.get().get().getLong("n");
            }

            @Override
            public WriteOutcome write(long value, FenceToken fence) {
                return fenced.update(counter, fence, Map.of("n", value));
            }
        }).withTtl(Duration.ofMillis(300)).withAttemptsPerWorker(10).build().run();
        System.out.println("firestore " + r.summary());
        assertThat(r.stalls()).isPositive();
        assertThat(r.isSafe()).as(r.summary()).isTrue();
        db.close();
    }
}
