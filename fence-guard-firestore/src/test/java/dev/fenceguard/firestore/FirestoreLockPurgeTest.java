package dev.fenceguard.firestore;

import static dev.fenceguard.firestore.HorizonClock.MINUTE;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.spi.Grant;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The purge of CLOCK_FLOORED lock documents (docs/fence-lifecycle.md), and the fences issued after it. */
class FirestoreLockPurgeTest {

    private static final Firestore DB = Emulator.newProject("lockpurge");
    private static final Duration T = Duration.ofSeconds(10);

    @AfterAll
    static void close() throws Exception {
        DB.close();
    }

    private static FenceGuardFirestore floored(String collection, Duration margin, HorizonClock.Metrics metrics) {
        return FenceGuardFirestore.builder(DB).withLockCollection(collection).withFenceStrategy(FenceStrategy.CLOCK_FLOORED)
                .withClockMargin(margin).withMetrics(metrics).build();
    }

    private static long fenceOf(FirestoreLockBackend b, String key) throws Exception {
        return b.documentOf(key).get().get().getLong("fence");
    }

    private static Grant acquire(FirestoreLockBackend b, String key, LockId id) throws Exception {
        return b.tryAcquire(LockKey.of(key), id, Duration.ofMinutes(1), T).toCompletableFuture().get().orElseThrow();
    }

    /** A lock document as the backend writes it (docs/firestore.md, storage layout), with a lease or none. */
    private static void lockDoc(FirestoreLockBackend b, String key, long fence, Long expiresAtMillis) throws Exception {
        Map<String, Object> doc = new HashMap<>(Map.of("key", key, "fence", fence, "acquiredAtMillis", 0L));
        if (expiresAtMillis != null) {
            doc.put("lockId", "someone");
            doc.put("expiresAtMillis", expiresAtMillis);
        }
        b.documentOf(key).set(doc).get();
    }

    @Test
    void purgeRemovesFreeDocumentsBelowTheFloorAMarginAgoAndNothingElse() throws Exception {
        HorizonClock.Metrics metrics = new HorizonClock.Metrics();
        FirestoreLockBackend b = floored("locks_rule", Duration.ofMinutes(5), metrics).lockBackend();
        long nowMs = HorizonClock.serverMicros(DB) / 1000;
        long old = HorizonClock.tickAgo(DB, Duration.ofMinutes(10));
        lockDoc(b, "released-old", old, null);                        // removable
        lockDoc(b, "released-young", old + 9 * MINUTE, null);         // its fence is within the margin: kept
        lockDoc(b, "expired-long-ago", old, nowMs - 6 * 60_000);      // removable
        lockDoc(b, "expired-lately", old, nowMs - 60_000);            // its lease ended within the margin: kept
        lockDoc(b, "held", old, nowMs + 10 * 60_000);                 // live: kept
        lockDoc(b, "dense-before", 3, null);                          // a fence from DENSE days: removable
        Map<String, Long> before = new HashMap<>();
        for (String k : List.of("released-old", "expired-long-ago", "dense-before")) {
            before.put(k, fenceOf(b, k));
        }

        PurgeResult r = b.purge(Purge.ofDefaults().withBatchSize(2));
        assertThat(r.removed()).isEqualTo(3);
        assertThat(r.complete()).isTrue();
        // in (fence, id) order: dense-before, expired-lately | expired-long-ago, held | released-old
        assertThat(r.batches()).isEqualTo(3);
        assertThat(metrics.purged).containsExactly("firestore|lock|1", "firestore|lock|1", "firestore|lock|1");
        for (String k : List.of("released-old", "expired-long-ago", "dense-before")) {
            assertThat(b.documentOf(k).get().get().exists()).as(k).isFalse();
        }
        for (String k : List.of("released-young", "expired-lately", "held")) {
            assertThat(b.documentOf(k).get().get().exists()).as(k).isTrue();
        }
        // the next acquisition of a purged key issues a fence above every fence the collection ever issued
        long highest = old + 9 * MINUTE;
        for (String k : List.of("released-old", "expired-long-ago", "dense-before")) {
            long fence = acquire(b, k, LockId.random()).fence();
            assertThat(fence).as(k).isGreaterThan(before.get(k)).isGreaterThan(highest);
        }
    }

    @Test
    void aPurgedKeysNextFenceIsAboveEveryEarlierOne() throws Exception {
        HorizonClock.Metrics metrics = new HorizonClock.Metrics();
        FirestoreLockBackend b = floored("locks_cycle", Duration.ZERO, metrics).lockBackend();
        long highest = 0;
        for (int round = 0; round < 3; round++) {
            for (String k : List.of("a", "b", "c")) {
                LockId id = LockId.random();
                Grant g = acquire(b, k, id);
                assertThat(g.fence()).as("round %d key %s", round, k).isGreaterThan(highest);
                highest = Math.max(highest, g.fence());
                assertThat(b.release(LockKey.of(k), id, T).toCompletableFuture().get()).isTrue();
            }
            LockId holder = LockId.random();
            acquire(b, "held", holder); // never free during the purge
            PurgeResult r = b.purge(Purge.ofDefaults());
            assertThat(r.removed()).as("round %d: the three free documents (margin 0)", round).isEqualTo(3);
            assertThat(b.documentOf("held").get().get().exists()).isTrue();
            assertThat(b.release(LockKey.of("held"), holder, T).toCompletableFuture().get()).isTrue();
            highest = Math.max(highest, fenceOf(b, "held"));
        }
        assertThat(metrics.total("lock")).as("\"held\" is taken again before each purge").isEqualTo(9);
    }

    @Test
    void aLockPurgeStoppedByItsTimeBoundResumesAfterItsCursor() throws Exception {
        FirestoreLockBackend b = floored("locks_resume", Duration.ZERO, new HorizonClock.Metrics()).lockBackend();
        for (int i = 0; i < 5; i++) {
            LockId id = LockId.random();
            acquire(b, "k" + i, id);
            b.release(LockKey.of("k" + i), id, T).toCompletableFuture().get();
        }
        Purge slow = Purge.ofDefaults().withBatchSize(2).withMaxDuration(Duration.ofNanos(1));
        PurgeResult r = b.purge(slow);
        long removed = r.removed();
        int calls = 1;
        while (!r.complete()) {
            r = b.purge(slow.withStartAfter(r.resumeAfter().orElseThrow()));
            removed += r.removed();
            calls++;
        }
        assertThat(removed).isEqualTo(5);
        assertThat(calls).isEqualTo(3);
        DocumentReference any = b.documentOf("k0");
        assertThat(any.getParent().get().get().isEmpty()).isTrue();
    }

    /**
     * A purge starts each batch and each removal from the callback of an earlier one. It must start them in the
     * context the purge was called in, not in that callback's: gRPC's context storage (the Firestore SDK installs
     * OpenTelemetry's) may make a child of the current context each time one is attached, so work started in the
     * last step's context grew a chain of contexts step by step, held until the purge returned (gRPC logged
     * "Context ancestry chain length is abnormally long" in a 50,000-document purge). Measured here as the depth
     * ({@code generation}) of the gRPC context current where each batch reports what it removed, over 300
     * one-document batches: it must not grow with the batches.
     */
    @Test
    void aLongPurgeDoesNotGrowAChainOfGrpcContexts() throws Exception {
        java.lang.reflect.Field generation = io.grpc.Context.class.getDeclaredField("generation");
        generation.setAccessible(true);
        List<Integer> depths = new java.util.concurrent.CopyOnWriteArrayList<>();
        dev.fenceguard.core.LockMetrics depthAtEachBatch = new dev.fenceguard.core.LockMetrics() {
            @Override
            public void acquireAttempt(String backend, dev.fenceguard.core.LockMetrics.AcquireOutcome outcome, Duration latency) {
            }

            @Override
            public void held(String backend, Duration holdTime) {
            }

            @Override
            public void renewFailed(String backend) {
            }

            @Override
            public void highFence(String backend) {
            }

            @Override
            public void staleWriteRejected(String resourceType) {
            }

            @Override
            public void purged(String store, String kind, long removed) {
                try {
                    depths.add(generation.getInt(io.grpc.Context.current()));
                } catch (IllegalAccessException e) {
                    throw new AssertionError(e);
                }
            }
        };
        FenceGuardFirestore fg = FenceGuardFirestore.builder(DB).withLockCollection("locks_long")
                .withFenceStrategy(FenceStrategy.CLOCK_FLOORED).withClockMargin(Duration.ZERO).withMetrics(depthAtEachBatch).build();
        int documents = 300;
        com.google.cloud.firestore.WriteBatch batch = DB.batch();
        for (int k = 0; k < documents; k++) {
            batch.set(fg.lockBackend().documentOf("free-" + k), Map.of("key", "free-" + k, "fence", 3L, "acquiredAtMillis", 0L));
        }
        batch.commit().get();

        PurgeResult r = fg.purgeLocks(Purge.ofDefaults().withBatchSize(1));

        assertThat(r.removed()).isEqualTo(documents);
        assertThat(depths).hasSize(documents); // one per batch that removed something
        assertThat(depths.stream().mapToInt(Integer::intValue).max().orElseThrow())
                .as("gRPC context depth where each of %d batches ended, first %s, last %s", depths.size(), depths.get(0),
                        depths.get(depths.size() - 1))
                .isLessThan(depths.get(0) + 10);
    }
}
