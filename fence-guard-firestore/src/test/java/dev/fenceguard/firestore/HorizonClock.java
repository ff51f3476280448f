package dev.fenceguard.firestore;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.internal.ClockFloor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The emulator's clock as the horizon tests need it: fences chosen relative to Firestore's own read
 * time (the clock rule 1 and the purges judge by), never the test's, and metrics that record purges.
 */
final class HorizonClock {

    /** Fences per minute of clock floor. */
    static final long MINUTE = 60_000 * ClockFloor.PER_MILLISECOND;

    private HorizonClock() {}

    /** Firestore's clock now: the read time of a read (of a document nothing writes). */
    static long serverMicros(Firestore db) throws Exception {
        Timestamp t = db.collection("clock").document("never-written").get().get().getReadTime();
        return t.getSeconds() * 1_000_000L + t.getNanos() / 1_000;
    }

    /** {@code tick(serverNow - ago)}. */
    static long tickAgo(Firestore db, Duration ago) throws Exception {
        return ClockFloor.floorAtMicros(serverMicros(db) - ago.toNanos() / 1_000);
    }

    /** Counts purged records and stale rejections. */
    static final class Metrics implements LockMetrics {
        final List<String> purged = new ArrayList<>();
        final AtomicInteger stale = new AtomicInteger();

        @Override
        public synchronized void purged(String store, String kind, long removed) {
            purged.add(store + "|" + kind + "|" + removed);
        }

        @Override
        public void staleWriteRejected(String resourceType) {
            stale.incrementAndGet();
        }

        @Override
        public void acquireAttempt(String backend, AcquireOutcome outcome, Duration latency) {}

        @Override
        public void held(String backend, Duration holdTime) {}

        @Override
        public void renewFailed(String backend) {}

        @Override
        public void highFence(String backend) {}

        synchronized long total(String kind) {
            return purged.stream().filter(p -> p.split("\\|")[1].equals(kind)).mapToLong(p -> Long.parseLong(p.split("\\|")[2])).sum();
        }
    }
}
