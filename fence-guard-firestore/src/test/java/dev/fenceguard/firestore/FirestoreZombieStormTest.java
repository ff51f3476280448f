package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.firestore.internal.FirestoreErrors;
import dev.fenceguard.testkit.ZombieStorm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The zombie storm on the Firestore lock backend with FencedFirestore. Size: 60 attempts, or
 * {@code -Dfenceguard.storm.attempts=N} for a soak. The emulator takes tens of milliseconds per
 * transaction, so a soak splits its size into storms of at most {@value #MAX_PER_STORM} attempts, each
 * on its own lock key and counter document (each a full storm with its own workers and zombies), run in
 * parallel; every one must be safe.
 */
class FirestoreZombieStormTest {

    static final int MAX_PER_STORM = 1250;

    private static ZombieStorm storm(Firestore db, String name, int attempts) throws Exception {
        DocumentReference counter = db.collection("counters").document(name);
        counter.set(Map.of("n", 0L)).get();
        FencedFirestore fenced = FenceGuardFirestore.builder(db).withMetrics(LockMetrics.none()).build().fencedWrites();
        LockClient locks = LockClient.builder(FenceGuardFirestore.builder(db).build().lockBackend())
                .withMetrics(LockMetrics.none()).withBackoff(Duration.ofMillis(2), Duration.ofMillis(100)).build();
        return ZombieStorm.builder(locks, "counter:" + name, new ZombieStorm.FencedCounter() {
            @Override
            public WriteOutcome claim(FenceToken fence) {
                return fenced.claim(counter, fence);
            }

            @Override
            public long read() {
                // The test's own read; its errors mapped as fence-guard maps them (a user's repository maps its own).
                Long n = FirestoreErrors.await(counter.get(), counter.getPath(), "read").getLong("n");
                return n == null ? 0 : n;
            }

            @Override
            public WriteOutcome write(long value, FenceToken fence) {
                return fenced.update(counter, fence, Map.of("n", value));
            }
        }).withAttempts(attempts).withTtl(Duration.ofMillis(300)).withCallTimeout(Duration.ofSeconds(30)).build();
    }

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLost() throws Exception {
        int size = ZombieStorm.attemptsProperty(60);
        int storms = (size + MAX_PER_STORM - 1) / MAX_PER_STORM;
        Firestore db = Emulator.newProject("storm");
        ExecutorService pool = Executors.newFixedThreadPool(storms);
        try {
            List<Future<ZombieStorm.Result>> running = new ArrayList<>();
            for (int i = 0; i < storms; i++) {
                int share = size / storms + (i < size % storms ? 1 : 0);
                ZombieStorm s = storm(db, "c" + i, share);
                running.add(pool.submit(s::run));
            }
            long attempts = 0;
            long stalls = 0;
            for (int i = 0; i < storms; i++) {
                ZombieStorm.Result r = running.get(i).get();
                System.out.println("STORM firestore (" + (i + 1) + " of " + storms + " in parallel): " + r.summary());
                r.requireSafe();
                attempts += r.attempts();
                stalls += r.stalls();
            }
            assertThat(attempts).isEqualTo(size);
            assertThat(stalls).isPositive();
        } finally {
            pool.shutdownNow();
            db.close();
        }
    }
}
