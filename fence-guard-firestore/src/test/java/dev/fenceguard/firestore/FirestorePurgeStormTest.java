package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Query;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.ZombieStorm;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The zombie storm with a purge running beside it on Firestore, the counterpart of
 * {@code PostgresPurgeStormTest} (fence-guard-jooq) and {@code RedisExpiryStormTest} (fence-guard-redis): a
 * clock-floored Firestore lock (the entry's backend, {@code CLOCK_FLOORED} because it has a horizon); the
 * counter document and {@value #SIDE_KEYS} side documents in one collection, written through a
 * {@link FencedFirestore} with a horizon of 1 s and no clock margin, so that tombstones become purgeable while
 * the storm runs; a loop purging that collection until the storm ends. Each claim first deletes the side
 * document chosen by its fence, leaving a tombstone; each write first re-creates it with the same fence. A
 * zombie (stalled for twice the 750 ms lease, so its fence is older than the horizon when it wakes) meets a
 * newer lease's tombstone, its own, or nothing because the purge removed it: each must refuse it or admit it
 * exactly as the rule says, so no side write is ever applied below a fence its document recorded.
 *
 * <p>Margin 0 as on PostgreSQL: the emulator's read times are this host's clock (the clock rule 1, the
 * purge and the clock-floored lock all read), and the host's clock does not step back during a test; the
 * margin only delays a purge. Size: 60 attempts, or {@code -Dfenceguard.storm.attempts=N} for a soak, split
 * like {@link FirestoreZombieStormTest}'s into parallel storms of at most
 * {@value FirestoreStorms#MAX_PER_STORM}, each with its own collection and its own purge loop; about
 * {@value #STALLS} stalls per storm whatever its size (each blocks the lock for one lease).
 *
 * <p>Nothing here is timed: the storm's counts hold whatever the schedule; each loop's first purge ends
 * before its storm starts (a latch), and its purges are paced by the storm's claims; after the storms the
 * test waits for the emulator's clock, not the JVM's, to pass the horizon of every fence written, then one
 * purge of each collection must leave no tombstone and the counter as its storm left it.
 */
class FirestorePurgeStormTest {

    static final int SIDE_KEYS = 256;
    static final int STALLS = 10;
    private static final Duration TTL = Duration.ofMillis(750);
    private static final Duration HORIZON = Duration.ofSeconds(1);

    @Test
    void noStaleWriteIsAppliedAndNoUpdateIsLostWhilePurgesRemoveTombstones() throws Exception {
        int size = ZombieStorm.attemptsProperty(60);
        Firestore db = Emulator.newProject("purgestorm");
        HorizonClock.Metrics metrics = new HorizonClock.Metrics();
        FenceGuardFirestore guard = FenceGuardFirestore.builder(db).withHorizon(HORIZON).withClockMargin(Duration.ZERO)
                .withMetrics(metrics).build();
        FencedFirestore fenced = guard.fencedWrites();
        try {
            List<PurgedStorm> storms = FirestoreStorms.inParallel(size, (i, share) -> {
                PurgedStorm s = new PurgedStorm(fenced, db.collection("purged" + i));
                ZombieStorm storm = FirestoreStorms.storm(guard.lockBackend(), "c" + i, s.side.around(FirestoreStorms.counter(fenced, s.counter)), share)
                        .withTtl(TTL).withStallProbability(Math.min(0.25, (double) STALLS / share)).build();
                return () -> s.run(storm);
            });
            long attempts = 0;
            long stalls = 0;
            long belowHorizon = 0;
            for (int i = 0; i < storms.size(); i++) {
                PurgedStorm s = storms.get(i);
                System.out.println("STORM firestore, purging beside it (" + (i + 1) + " of " + storms.size() + " in parallel): "
                        + s.result.summary() + " purges=" + s.purges.get() + " side writes applied=" + s.side.applied.get()
                        + " refused below the horizon=" + s.side.belowHorizon.get() + " refused by a newer fence=" + s.side.newer.get()
                        + " side-stale-applied=" + s.side.staleApplied.get());
                s.result.requireSafe();
                assertThat(s.side.staleApplied.get()).as("side writes applied below a fence their document had recorded (storm %d)", i + 1).isZero();
                assertThat(s.side.applied.get()).as("side writes applied (storm %d)", i + 1).isPositive();
                assertThat(s.purges.get()).as("purges beside storm %d", i + 1).isGreaterThanOrEqualTo(2);
                attempts += s.result.attempts();
                stalls += s.result.stalls();
                belowHorizon += s.side.belowHorizon.get();
            }
            System.out.println("STORM firestore, purging beside it: tombstones purged=" + metrics.total("tombstone"));
            assertThat(attempts).isEqualTo(size);
            assertThat(stalls).isPositive();

            // Once the emulator's clock has passed every fence written by the horizon, one purge leaves no tombstone.
            long highest = 0;
            for (PurgedStorm s : storms) {
                highest = Math.max(highest, s.highestFence());
            }
            long give = System.nanoTime() + Duration.ofMinutes(1).toNanos();
            while (HorizonClock.tickAgo(db, HORIZON) <= highest) {
                assertThat(System.nanoTime()).as("the emulator's clock never passed fence %d by the horizon", highest).isLessThan(give);
            }
            for (PurgedStorm s : storms) {
                PurgeResult last = fenced.purge(s.collection, Purge.ofDefaults());
                assertThat(last.complete()).isTrue();
                assertThat(s.tombstones()).as("tombstones left in %s after one more purge", s.collection.getId()).isEmpty();
                assertThat(s.counter.get().get().getLong("n")).isEqualTo(s.result.finalValue());
            }
            assertThat(metrics.total("tombstone")).as("tombstones the purges removed").isPositive();
        } finally {
            db.close();
        }
    }

    /** One storm's collection (its counter and side documents), its purge loop, and what they did. */
    static final class PurgedStorm {
        final FencedFirestore fenced;
        final CollectionReference collection;
        final DocumentReference counter;
        final SideKeys side;
        final AtomicLong purges = new AtomicLong();
        ZombieStorm.Result result;

        PurgedStorm(FencedFirestore fenced, CollectionReference collection) {
            this.fenced = fenced;
            this.collection = collection;
            this.counter = collection.document("counter");
            this.side = new SideKeys(fenced, collection);
        }

        /** Runs {@code storm} with this collection's purge loop beside it; a failed purge fails the storm. */
        PurgedStorm run(ZombieStorm storm) throws Exception {
            AtomicBoolean stormOver = new AtomicBoolean();
            CountDownLatch firstPurge = new CountDownLatch(1);
            ExecutorService purger = Executors.newSingleThreadExecutor();
            Future<Void> loop = purger.submit(() -> {
                Purge batch = Purge.ofDefaults().withBatchSize(16);
                Object cursor = null;
                do {
                    PurgeResult r = fenced.purge(collection, cursor == null ? batch : batch.withStartAfter(cursor));
                    cursor = r.resumeAfter().orElse(null);
                    purges.incrementAndGet();
                    firstPurge.countDown();
                    // Paced by the storm, not by a clock: one purge per claim at most (the wait only lets the loop see the end).
                    if (side.claims.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                        side.claims.drainPermits();
                    }
                } while (!stormOver.get());
                return null;
            });
            try {
                assertThat(firstPurge.await(1, TimeUnit.MINUTES)).as("the purge loop of %s ran its first purge", collection.getId()).isTrue();
                result = storm.run();
            } finally {
                stormOver.set(true);
                purger.shutdown();
            }
            loop.get(1, TimeUnit.MINUTES);
            return this;
        }

        /** The highest fence any document of the collection holds. */
        long highestFence() throws Exception {
            List<QueryDocumentSnapshot> top = collection.orderBy("_fence", Query.Direction.DESCENDING).limit(1).get().get().getDocuments();
            return top.isEmpty() ? 0 : top.get(0).getLong("_fence");
        }

        /** The ids of the tombstones in the collection. */
        List<String> tombstones() throws Exception {
            return collection.whereEqualTo("_deleted", true).get().get().getDocuments().stream().map(QueryDocumentSnapshot::getId).toList();
        }
    }

    /**
     * The side documents: a claim deletes {@code s<fence mod 256>} with its fence, a write re-creates it
     * first. A side write is stale if its document had recorded a higher fence before the write started (so
     * the check has no false alarm: that fence was recorded first).
     */
    static final class SideKeys {
        final FencedFirestore fenced;
        final CollectionReference collection;
        final ConcurrentHashMap<String, AtomicLong> recorded = new ConcurrentHashMap<>();
        final AtomicLong applied = new AtomicLong();
        final AtomicLong belowHorizon = new AtomicLong();
        final AtomicLong newer = new AtomicLong();
        final AtomicLong staleApplied = new AtomicLong();
        final Semaphore claims = new Semaphore(0);

        SideKeys(FencedFirestore fenced, CollectionReference collection) {
            this.fenced = fenced;
            this.collection = collection;
        }

        private static String id(FenceToken fence) {
            return "s" + Math.floorMod(fence.value(), SIDE_KEYS);
        }

        private AtomicLong seen(String id) {
            return recorded.computeIfAbsent(id, k -> new AtomicLong());
        }

        void delete(FenceToken fence) {
            String id = id(fence);
            try {
                if (fenced.delete(collection.document(id), fence) instanceof WriteOutcome.Applied) {
                    seen(id).accumulateAndGet(fence.value(), Math::max);
                }
            } finally {
                claims.release();
            }
        }

        void recreate(FenceToken fence) {
            String id = id(fence);
            long before = seen(id).get();
            switch (fenced.set(collection.document(id), fence, Map.of("n", 1L))) {
                case WriteOutcome.Applied a -> {
                    applied.incrementAndGet();
                    if (fence.value() < before) {
                        staleApplied.incrementAndGet();
                    }
                    seen(id).accumulateAndGet(fence.value(), Math::max);
                }
                case WriteOutcome.Stale s -> (s.reason() == WriteOutcome.Stale.Reason.BELOW_HORIZON ? belowHorizon : newer).incrementAndGet();
                case WriteOutcome.NotFound n -> throw new AssertionError("a set answered NotFound: " + n);
            }
        }

        /** {@code counter}, each claim and write with its side document first. */
        ZombieStorm.FencedCounter around(ZombieStorm.FencedCounter counter) {
            return new ZombieStorm.FencedCounter() {
                @Override
                public WriteOutcome claim(FenceToken fence) throws Exception {
                    delete(fence);
                    return counter.claim(fence);
                }

                @Override
                public long read() throws Exception {
                    return counter.read();
                }

                @Override
                public WriteOutcome write(long value, FenceToken fence) throws Exception {
                    recreate(fence);
                    return counter.write(value, fence);
                }
            };
        }
    }
}
