package dev.fenceguard.benchmarks;

import static dev.fenceguard.benchmarks.StorageBenchmark.load;
import static dev.fenceguard.benchmarks.StorageBenchmark.requireApplied;
import static dev.fenceguard.benchmarks.StorageBenchmark.secs;
import static dev.fenceguard.benchmarks.StorageBenchmark.windowed;

import com.google.api.core.ApiFuture;
import com.google.cloud.Timestamp;
import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import com.google.cloud.firestore.Query;
import com.google.cloud.firestore.WriteBatch;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.internal.ClockFloor;
import dev.fenceguard.firestore.AsyncFencedFirestore;
import dev.fenceguard.firestore.FenceGuardFirestore;
import dev.fenceguard.firestore.FencedFirestore;
import dev.fenceguard.firestore.FirestoreLockBackend;
import dev.fenceguard.testkit.servers.TestFirestore;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The Firestore part of {@link StorageBenchmark}, on the emulator ({@link TestFirestore}; for large N start
 * one with a larger heap and point {@code FENCE_GUARD_TEST_FIRESTORE_EMULATOR_HOST} at it). The emulator
 * has no storage-size API (production Firestore bills stored bytes per document, index entries included,
 * and reports them only per database, daily): what it shows is the document count, by an aggregation
 * query ({@code count()}).
 * <ol>
 *   <li>Tombstones, R rounds, each in a collection of its own: F live documents written directly (batches
 *       of 500, the shape a fenced {@code set} of a new document leaves), each deleted by a fenced
 *       {@code delete} (asynchronous, 256 in flight), which leaves a tombstone; then
 *       {@link FencedFirestore#purge} in batches of 1,000. The fenced deletes' rate is the baseline the
 *       purge's rate is given against, in the same round.</li>
 *   <li>Lock documents: FL keys acquired and released ({@code CLOCK_FLOORED}, margin 0, 256 in flight),
 *       then {@link FirestoreLockBackend#purge}.</li>
 *   <li>Churn: K rounds of M new documents created (fenced {@code set}) and deleted (fenced {@code delete})
 *       on two collections, one never purged (the baseline) and one purged all along (a purge of at most 5 s,
 *       every 200 ms), with a horizon of 5 s ({@link #CHURN_H}).</li>
 * </ol>
 */
final class FirestoreStorage {

    /** The shortest horizon: tombstones may go one second after their fence. */
    private static final Duration H = Duration.ofSeconds(1);
    /** No clock margin: the emulator's read times are this host's clock, which does not step back here (the margin only delays a purge). */
    private static final Duration M = Duration.ZERO;
    /**
     * The churn's horizon. Its writes take their fence from this host's clock as they are sent; with 1 s, a
     * create that waited in the emulator's queue for more than a second on a loaded machine was refused
     * ({@code BELOW_HORIZON}, as rule 1 says), so the churn leaves its writes 5 s.
     */
    private static final Duration CHURN_H = Duration.ofSeconds(5);
    private static final Duration CALL = Duration.ofSeconds(30);
    private static final Map<String, Object> BODY = Map.of("body", "order placed, 1 item, EUR 12.50");

    private FirestoreStorage() {}

    static void run(int n, int rounds, int lockKeys, int churnRounds, int churnKeys) throws Exception {
        TestFirestore emulator = TestFirestore.server();
        try (Firestore db = FirestoreOptions.newBuilder().setProjectId(TestFirestore.newProjectId("storage"))
                .setEmulatorHost(emulator.hostPort()).setCredentials(new FirestoreOptions.EmulatorCredentials()).build().getService()) {
            FenceGuardFirestore fg = FenceGuardFirestore.builder(db).withLockCollection("st_locks").withHorizon(H).withClockMargin(M)
                    .withCallTimeout(CALL).withMetrics(LockMetrics.none()).build();
            System.out.printf(Locale.ROOT, "%n== Firestore emulator (%s, %s), horizon %s, margin %s; load %s%n", emulator.origin(),
                    emulator.hostPort(), H, M, load());
            clock(db);
            if (n > 0) {
                tombstones(db, fg.fencedWrites(), n, rounds);
            }
            if (lockKeys > 0) {
                lockDocuments(db, fg, lockKeys);
            }
            if (churnRounds > 0) {
                FencedFirestore churning = FenceGuardFirestore.builder(db).withHorizon(CHURN_H).withClockMargin(M).withCallTimeout(CALL)
                        .withMetrics(LockMetrics.none()).build().fencedWrites();
                churn(db, churning, churnRounds, churnKeys);
            }
        }
    }

    // --- 0. the emulator's clock ------------------------------------------------------------------------------

    /**
     * Why margin 0 is fair on the emulator: its read times against this host's clock, taken just before each
     * read was sent and just after its reply came, over 1,000 reads; and whether a read time ever went back.
     */
    private static void clock(Firestore db) throws Exception {
        long earliest = Long.MAX_VALUE;
        long latest = Long.MIN_VALUE;
        long previous = Long.MIN_VALUE;
        int back = 0;
        for (int i = 0; i < 1_000; i++) {
            long sent = nowMicros();
            long read = micros(db.collection("clock").document("never-written").get().get().getReadTime());
            long replied = nowMicros();
            earliest = Math.min(earliest, read - sent);
            latest = Math.max(latest, read - replied);
            back += read < previous ? 1 : 0;
            previous = read;
        }
        System.out.printf(Locale.ROOT, "emulator read times against this host's clock over 1,000 reads: min(read time - request sent) %,d us"
                + " (>= 0: never before the request), max(read time - reply received) %,d us (<= 0: never after the reply);"
                + " went back %d times%n", earliest, latest, back);
    }

    private static long nowMicros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }

    private static long micros(Timestamp t) {
        return t.getSeconds() * 1_000_000L + t.getNanos() / 1_000;
    }

    // --- 1. tombstones ---------------------------------------------------------------------------------------

    private static void tombstones(Firestore db, FencedFirestore fenced, int n, int rounds) throws Exception {
        System.out.printf(Locale.ROOT, "%n== Firestore tombstones, %,d documents per round, %d rounds; load %s%n", n, rounds, load());
        List<Double> deleteRates = new ArrayList<>();
        List<Double> purgeRates = new ArrayList<>();
        List<Double> ratios = new ArrayList<>();
        AsyncFencedFirestore async = fenced.async();
        for (int r = 1; r <= rounds; r++) {
            CollectionReference c = db.collection("items" + r);
            System.out.printf(Locale.ROOT, "round %d (collection %s); load %s%n", r, c.getId(), load());
            long t0 = System.nanoTime();
            fill(db, c, n, tick(db));
            System.out.printf(Locale.ROOT, "  wrote %,d live documents (batches of 500): %.1f s%n", n, secs(t0));
            line(c, "N live documents");

            FenceToken fence = FenceToken.of(tick(db));
            t0 = System.nanoTime();
            windowed(n, i -> async.delete(c.document("o" + i), fence).thenAccept(o -> requireApplied(o, "delete o" + i)));
            double deleteSecs = secs(t0);
            line(c, "after N fenced deletes");

            awaitPast(db, fence.value(), H.plus(M));
            t0 = System.nanoTime();
            PurgeResult p = fenced.purge(c, bigBatches());
            double purgeSecs = secs(t0);
            line(c, "after the purge");
            double deleteRate = n / deleteSecs;
            double purgeRate = p.removed() / purgeSecs;
            System.out.printf(Locale.ROOT, "  fenced deletes: %.1f s, %,.0f/s; purge: removed %,d in %d batches, complete=%s: %.1f s, %,.0f docs/s"
                    + " (%.2fx the fenced deletes' rate)%n", deleteSecs, deleteRate, p.removed(), p.batches(), p.complete(), purgeSecs, purgeRate,
                    purgeRate / deleteRate);
            deleteRates.add(deleteRate);
            purgeRates.add(purgeRate);
            ratios.add(purgeRate / deleteRate);
        }
        System.out.printf(Locale.ROOT, "over %d rounds (min / median / max): fenced deletes %s /s; purge %s docs/s; purge / deletes %s%n", rounds,
                spread(deleteRates, "%,.0f"), spread(purgeRates, "%,.0f"), spread(ratios, "%.2fx"));
    }

    /** Writes documents {@code o1 .. o<n>} of {@code c} as a fenced set of a new document leaves them, 500 per batch, 8 batches in flight. */
    private static void fill(Firestore db, CollectionReference c, int n, long fence) throws Exception {
        ArrayDeque<ApiFuture<?>> inFlight = new ArrayDeque<>();
        for (int first = 1; first <= n; first += 500) {
            WriteBatch batch = db.batch();
            for (int i = first; i < first + 500 && i <= n; i++) {
                batch.set(c.document("o" + i), Map.of("body", BODY.get("body"), "_fence", fence));
            }
            if (inFlight.size() == 8) {
                inFlight.poll().get();
            }
            inFlight.add(batch.commit());
        }
        while (!inFlight.isEmpty()) {
            inFlight.poll().get();
        }
    }

    // --- 2. lock documents -----------------------------------------------------------------------------------

    private static void lockDocuments(Firestore db, FenceGuardFirestore fg, int keys) throws Exception {
        FirestoreLockBackend locks = fg.lockBackend();
        System.out.printf(Locale.ROOT, "%n== Firestore lock documents, %,d keys acquired and released (CLOCK_FLOORED, margin %s); load %s%n",
                keys, M, load());
        CollectionReference c = db.collection("st_locks");
        AtomicLong highest = new AtomicLong();
        long t0 = System.nanoTime();
        windowed(keys, i -> {
            LockKey key = LockKey.of("order:" + i);
            LockId id = LockId.random();
            return locks.tryAcquire(key, id, Duration.ofSeconds(30), CALL).thenCompose(g -> {
                highest.accumulateAndGet(g.orElseThrow(() -> new IllegalStateException(key + " was held")).fence(), Math::max);
                return locks.release(key, id, CALL);
            }).thenAccept(released -> {
                if (!released) {
                    throw new IllegalStateException("release of " + key + " failed");
                }
            });
        });
        double pairSecs = secs(t0);
        System.out.printf(Locale.ROOT, "  %,d acquire + release pairs: %.1f s, %,.0f pairs/s%n", keys, pairSecs, keys / pairSecs);
        lockLine(c, "N free lock documents");
        awaitPast(db, highest.get(), M);
        t0 = System.nanoTime();
        PurgeResult p = fg.purgeLocks(bigBatches());
        double purgeSecs = secs(t0);
        lockLine(c, "after the purge");
        System.out.printf(Locale.ROOT, "  purge: removed %,d in %d batches, complete=%s: %.1f s, %,.0f docs/s (%.2fx the pairs' rate)%n",
                p.removed(), p.batches(), p.complete(), purgeSecs, p.removed() / purgeSecs, (p.removed() / purgeSecs) / (keys / pairSecs));
    }

    // --- 3. churn --------------------------------------------------------------------------------------------

    private static void churn(Firestore db, FencedFirestore fenced, int rounds, int keys) throws Exception {
        System.out.printf(Locale.ROOT, "%n== Steady churn on Firestore: %d rounds, each creates (fenced set) and deletes (fenced delete) %,d new"
                + " documents in each collection; load %s%n", rounds, keys, load());
        CollectionReference none = db.collection("churn_none");
        CollectionReference purged = db.collection("churn_purged");
        System.out.printf("collections: churn_none (never purged), churn_purged (purged on a scheduler thread: a purge of at most 5 s"
                + " (batches of 1,000), then 200 ms pause, each purge going on from where the one before stopped); horizon %s, 64 writes"
                + " in flight%n", CHURN_H);
        AtomicLong removed = new AtomicLong();
        AtomicLong purges = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        AtomicReference<Object> cursor = new AtomicReference<>();
        AtomicReference<Throwable> purgeFailure = new AtomicReference<>();
        ScheduledExecutorService schedule = Executors.newSingleThreadScheduledExecutor();
        schedule.scheduleWithFixedDelay(() -> {
            try {
                // Bounded, so that the count of what was removed keeps up: a purge that never runs out of candidates never returns.
                Purge bounded = Purge.ofDefaults().withBatchSize(1_000).withMaxDuration(Duration.ofSeconds(5));
                Object after = cursor.get();
                PurgeResult r = fenced.purge(purged, after == null ? bounded : bounded.withStartAfter(after));
                cursor.set(r.resumeAfter().orElse(null));
                removed.addAndGet(r.removed());
                purges.incrementAndGet();
            } catch (Throwable e) {
                purgeFailure.compareAndSet(null, e);
            }
        }, 200, 200, TimeUnit.MILLISECONDS);
        AsyncFencedFirestore async = fenced.async();
        try {
            // Each round deletes every document it creates, so what a collection holds after a round is tombstones.
            System.out.printf("%-5s %-9s %-7s | %-22s | %-22s%n", "round", "purged", "purges", "churn_none: documents", "churn_purged: documents");
            for (int r = 0; r < rounds; r++) {
                long first = (long) r * keys;
                long t0 = System.nanoTime();
                for (CollectionReference c : List.of(none, purged)) {
                    windowed(keys, 64, i -> {
                        String id = "o" + (first + i);
                        // A fence from this host's clock, the emulator's too: above the horizon when it is sent.
                        FenceToken fence = FenceToken.of(ClockFloor.floorAtMicros(nowMicros()));
                        return async.set(c.document(id), fence, BODY).thenCompose(set -> {
                            if (set instanceof WriteOutcome.Stale s && s.reason() == WriteOutcome.Stale.Reason.BELOW_HORIZON) {
                                refused.incrementAndGet(); // rule 1's price: nothing was created, so nothing to delete
                                return CompletableFuture.completedFuture(null);
                            }
                            requireApplied(set, "set " + id);
                            return async.delete(c.document(id), fence).thenAccept(deleted -> requireApplied(deleted, "delete " + id));
                        });
                    });
                }
                double roundSecs = secs(t0);
                System.out.printf(Locale.ROOT, "%-5d %-9s %-7d | %,22d | %,22d   (round %.1f s)%n", r + 1,
                        String.format(Locale.ROOT, "%,d", removed.get()), purges.get(), count(none), count(purged), roundSecs);
                if (purgeFailure.get() != null) {
                    throw new IllegalStateException("the scheduled purge failed", purgeFailure.get());
                }
            }
        } finally {
            schedule.shutdownNow();
            schedule.awaitTermination(1, TimeUnit.MINUTES);
        }
        System.out.printf(Locale.ROOT, "churn done; creates refused below the horizon: %,d; load %s%n", refused.get(), load());
    }

    // --- helpers ---------------------------------------------------------------------------------------------

    private static Purge bigBatches() {
        return Purge.ofDefaults().withBatchSize(1_000).withMaxDuration(Duration.ofHours(1));
    }

    private static Query tombstonesOf(CollectionReference c) {
        return c.whereEqualTo("_deleted", true);
    }

    /** The number of documents {@code q} matches, by an aggregation query (the emulator counts without returning them). */
    private static long count(Query q) throws Exception {
        return q.count().get().get().getCount();
    }

    private static void line(CollectionReference c, String label) throws Exception {
        System.out.printf(Locale.ROOT, "  %-28s documents %,10d (tombstones %,10d)%n", label, count(c), count(tombstonesOf(c)));
    }

    private static void lockLine(CollectionReference c, String label) throws Exception {
        System.out.printf(Locale.ROOT, "  %-28s documents %,10d%n", label, count(c));
    }

    /** The emulator's clock floor now: {@code tick} of the read time of a read of a document nothing writes. */
    private static long tick(Firestore db) throws Exception {
        return ClockFloor.floorAtMicros(micros(db.collection("clock").document("never-written").get().get().getReadTime()));
    }

    /** Waits (polling the emulator's clock) until {@code tick(now - behind)} is above {@code fence}. */
    private static void awaitPast(Firestore db, long fence, Duration behind) throws Exception {
        long ago = behind.toNanos() / 1000 / ClockFloor.MICROS_PER_FENCE;
        long t0 = System.nanoTime();
        while (tick(db) - ago <= fence) {
            Thread.sleep(100);
        }
        System.out.printf(Locale.ROOT, "  waited %.1f s for the emulator's clock to pass the horizon%n", secs(t0));
    }

    /** {@code min / median / max} of {@code values}, each in {@code format}. */
    private static String spread(List<Double> values, String format) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return String.format(Locale.ROOT, format + " / " + format + " / " + format, sorted.get(0), sorted.get(sorted.size() / 2),
                sorted.get(sorted.size() - 1));
    }
}
