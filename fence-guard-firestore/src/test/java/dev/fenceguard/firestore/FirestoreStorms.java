package dev.fenceguard.firestore;

import com.google.cloud.firestore.DocumentReference;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.firestore.internal.FirestoreErrors;
import dev.fenceguard.testkit.ZombieStorm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Pieces shared by the Firestore storms ({@link FirestoreZombieStormTest}, {@link FirestorePurgeStormTest}):
 * the fenced counter, a storm on the emulator, and a soak's split into parallel storms.
 */
final class FirestoreStorms {

    /**
     * The most attempts one storm takes. The emulator takes tens of milliseconds per call, so a soak splits
     * its size into storms of at most this many, each on its own lock key and counter document (each a full
     * storm with its own workers and zombies), run in parallel.
     */
    static final int MAX_PER_STORM = 1250;

    private FirestoreStorms() {}

    /**
     * Sets {@code counter} to {@code n = 0} and returns it as the storm's resource: claim and update through
     * {@code fenced}; the read is the test's own, its errors mapped as fence-guard maps them (a user's
     * repository maps its own).
     */
    static ZombieStorm.FencedCounter counter(FencedFirestore fenced, DocumentReference counter) throws Exception {
        counter.set(Map.of("n", 0L)).get();
        return new ZombieStorm.FencedCounter() {
            @Override
            public WriteOutcome claim(FenceToken fence) {
                return fenced.claim(counter, fence);
            }

            @Override
            public long read() {
                Long n = FirestoreErrors.await(counter.get(), counter.getPath(), "read").getLong("n");
                return n == null ? 0 : n;
            }

            @Override
            public WriteOutcome write(long value, FenceToken fence) {
                return fenced.update(counter, fence, Map.of("n", value));
            }
        };
    }

    /** A storm of {@code attempts} on lock key {@code counter:<name>} of {@code backend} (TTL 300 ms unless the caller sets one). */
    static ZombieStorm.Builder storm(LockBackend backend, String name, ZombieStorm.FencedCounter counter, int attempts) {
        LockClient locks = LockClient.builder(backend).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(2), Duration.ofMillis(100)).build();
        return ZombieStorm.builder(locks, "counter:" + name, counter).withAttempts(attempts).withTtl(Duration.ofMillis(300))
                .withCallTimeout(Duration.ofSeconds(30));
    }

    /** Makes the storm (or storm and checks) of part {@code index}, {@code share} attempts, on the test's thread. */
    interface Part<T> {
        Callable<T> make(int index, int share) throws Exception;
    }

    /**
     * Splits {@code size} attempts into {@code ceil(size / MAX_PER_STORM)} parts as equal as can be, makes
     * each on this thread, runs them in parallel and returns their results in part order; the first
     * failure fails the whole.
     */
    static <T> List<T> inParallel(int size, Part<T> part) throws Exception {
        int storms = (size + MAX_PER_STORM - 1) / MAX_PER_STORM;
        ExecutorService pool = Executors.newFixedThreadPool(storms);
        try {
            List<Future<T>> running = new ArrayList<>();
            for (int i = 0; i < storms; i++) {
                running.add(pool.submit(part.make(i, size / storms + (i < size % storms ? 1 : 0))));
            }
            List<T> results = new ArrayList<>();
            for (Future<T> f : running) {
                results.add(f.get());
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }
}
