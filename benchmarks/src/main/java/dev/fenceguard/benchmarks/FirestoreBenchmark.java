package dev.fenceguard.benchmarks;

import com.google.api.core.ApiFuture;
import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import com.google.cloud.firestore.WriteBatch;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.firestore.AsyncFencedFirestore;
import dev.fenceguard.firestore.FenceGuardFirestore;
import dev.fenceguard.firestore.FencedFirestore;
import dev.fenceguard.firestore.internal.DocIds;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.TestFirestore;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Firestore benchmarks of issue #5 on the emulator: RPCs per operation, counted by a gRPC client
 * interceptor, and ops/s against a plain transactional read-then-write of one document, in the same
 * run with the same client and threads. Arguments: {@code [seconds-per-phase=5] [threads=4] [rounds=3] [scale-keys=0]}.
 * A positive {@code scale-keys} adds the scale row of issue #14: acquire + release of a random key among
 * that many idle lock documents against among 1,000, one thread, alternating rounds. The emulator holds
 * every document in its heap: for a million, start it yourself with a larger one and point
 * {@code FENCE_GUARD_TEST_FIRESTORE_EMULATOR_HOST} at it (see docs/BENCHMARKS.md).
 */
public final class FirestoreBenchmark {

    public static void main(String[] args) throws Exception {
        Harness.Args cli = Harness.Args.of(args, 5, 4, 3);
        int scaleKeys = args.length > 3 ? Integer.parseInt(args[3]) : 0;
        TestFirestore emulator = TestFirestore.server();
        AtomicLong rpcs = new AtomicLong();
        ClientInterceptor counting = new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
                rpcs.incrementAndGet();
                return next.newCall(method, options);
            }
        };
        try (Firestore db = FirestoreOptions.newBuilder()
                .setProjectId(TestFirestore.newProjectId("bench"))
                .setCredentials(new FirestoreOptions.EmulatorCredentials())
                .setChannelProvider(InstantiatingGrpcChannelProvider.newBuilder()
                        .setEndpoint(emulator.hostPort())
                        .setChannelConfigurator(ManagedChannelBuilder::usePlaintext)
                        .setInterceptorProvider(() -> List.of(counting))
                        .build())
                .build().getService()) {
            // The harness runs blocking operations on its threads: wait on each asynchronous call.
            FenceGuardFirestore fenceGuard = FenceGuardFirestore.builder(db).withMetrics(LockMetrics.none()).build();
            BlockingBackend backend = BlockingBackend.of(fenceGuard.lockBackend());
            FencedFirestore fenced = fenceGuard.fencedWrites();
            Duration ttl = Duration.ofSeconds(30);
            FenceToken fence = FenceToken.of(7);
            for (int i = 0; i < 1000; i++) {
                db.collection("orders").document("o" + i).set(Map.of("status", "new")).get();
            }
            System.out.printf("Firestore emulator (%s), %d threads, %.1f s per phase, %d alternating rounds%n%n",
                    emulator.origin(), cli.threads(), cli.seconds(), cli.rounds());

            LockKey key = LockKey.of("rpc-count");
            LockId id = LockId.random();
            long before = rpcs.get();
            backend.tryAcquire(key, id, ttl).orElseThrow();
            long acquire = rpcs.get() - before;
            before = rpcs.get();
            backend.extend(key, id, ttl).orElseThrow();
            long extend = rpcs.get() - before;
            before = rpcs.get();
            backend.lookup(key).orElseThrow();
            long lookup = rpcs.get() - before;
            before = rpcs.get();
            backend.release(key, id);
            long release = rpcs.get() - before;
            before = rpcs.get();
            backend.tryAcquire(key, LockId.random(), ttl).orElseThrow();
            backend.tryAcquire(key, LockId.random(), ttl);
            long acquireHeld = rpcs.get() - before - acquire;
            DocumentReference doc = db.collection("orders").document("o0");
            before = rpcs.get();
            fenced.update(doc, fence, Map.of("status", "paid")).orThrow();
            long fencedUpdate = rpcs.get() - before;
            before = rpcs.get();
            baseline(db, doc);
            long baselineTx = rpcs.get() - before;
            System.out.printf(Locale.ROOT, "RPCs per operation: acquire %d (held: %d), extend %d, lookup %d, release %d, "
                    + "fenced update %d; baseline transactional read-then-write %d%n%n",
                    acquire, acquireHeld, extend, lookup, release, fencedUpdate, baselineTx);

            Harness h = new Harness(cli.threads(), cli.seconds());
            Harness.Op acquireRelease = (t, i) -> {
                LockKey k = LockKey.of("bench:" + t + ":" + (i % 200));
                LockId lockId = LockId.random();
                backend.tryAcquire(k, lockId, ttl).orElseThrow();
                backend.release(k, lockId);
            };
            Harness.Op twoBaselines = (t, i) -> {
                DocumentReference d = db.collection("orders").document("o" + (t * 250 + i % 250));
                baseline(db, d);
                baseline(db, d);
            };
            Harness.Op fencedOp = (t, i) -> fenced.update(db.collection("orders").document("o" + (t * 250 + i % 250)), fence,
                    Map.of("status", "paid")).orThrow();
            Harness.Op baselineOp = (t, i) -> baseline(db, db.collection("orders").document("o" + (t * 250 + i % 250)));
            // The async face (issue #31): the same update through AsyncFencedFirestore, each caller waiting on its stage,
            // so that the row measures what the face costs per call, not what more calls in flight would gain.
            AsyncFencedFirestore asyncFenced = fenced.async();
            Harness.Op asyncFencedOp = (t, i) -> asyncFenced.update(db.collection("orders").document("o" + (t * 250 + i % 250)),
                    fence, Map.of("status", "paid")).toCompletableFuture().join().orThrow();
            h.measure(acquireRelease);
            h.measure(twoBaselines);
            Harness.Phase[] r1 = h.compare(cli.rounds(), acquireRelease, twoBaselines);
            print("acquire+release pairs/s", r1[0], "2 x transactional read-then-write", r1[1]);
            h.measure(fencedOp);
            h.measure(asyncFencedOp);
            h.measure(baselineOp);
            Harness.Phase[] r2 = h.compare(cli.rounds(), List.of(fencedOp, asyncFencedOp, baselineOp)).stream()
                    .map(Harness::median).toArray(Harness.Phase[]::new);
            print("fenced update ops/s", r2[0], "transactional read-then-write", r2[2]);
            print("fenced update ops/s, async face", r2[1], "transactional read-then-write", r2[2]);
            if (scaleKeys > 0) {
                scale(db, scaleKeys, cli.seconds(), cli.rounds());
            }
        }
    }

    /**
     * Two lock collections, one of 1,000 idle lock documents and one of {@code large}, each written
     * directly in the shape a release leaves (a million real pairs would take hours on the emulator and
     * leave the same documents), then acquire + release of a random key of each, alternating.
     */
    private static void scale(Firestore db, int large, double seconds, int rounds) throws Exception {
        String small = "scale-1e3";
        String big = "scale-large";
        BlockingBackend smallLocks = BlockingBackend.of(FenceGuardFirestore.builder(db).withLockCollection(small)
                .withMetrics(LockMetrics.none()).build().lockBackend());
        BlockingBackend bigLocks = BlockingBackend.of(FenceGuardFirestore.builder(db).withLockCollection(big)
                .withMetrics(LockMetrics.none()).build().lockBackend());
        Duration ttl = Duration.ofSeconds(30);
        LockId sampleId = LockId.random();
        smallLocks.tryAcquire(LockKey.of("scale:0"), sampleId, ttl).orElseThrow();
        smallLocks.release(LockKey.of("scale:0"), sampleId);
        Map<String, Object> idle = db.collection(small).document(DocIds.of(LockKey.of("scale:0"))).get().get().getData();
        fill(db, small, 1_000, idle);
        long start = System.nanoTime();
        fill(db, big, large, idle);
        double fillSeconds = (System.nanoTime() - start) / 1e9;
        System.out.printf(Locale.ROOT, "scale: wrote %,d idle lock documents in %.0f s (%,.0f/s); idle document fields %s%n",
                large, fillSeconds, large / fillSeconds, idle.keySet());
        Harness h = new Harness(1, seconds);
        Harness.Op inBig = (t, i) -> pair(bigLocks, LockKey.of("scale:" + ThreadLocalRandom.current().nextInt(large)), ttl);
        Harness.Op inSmall = (t, i) -> pair(smallLocks, LockKey.of("scale:" + ThreadLocalRandom.current().nextInt(1_000)), ttl);
        h.measure(inBig);
        h.measure(inSmall);
        Harness.Phase[] r = h.compare(rounds, inBig, inSmall);
        System.out.printf(Locale.ROOT, "%-40s %8.0f/s  p50 %5d us  p99 %6d us%n%-40s %8.0f/s  p50 %5d us  p99 %6d us%n  ratio %.2fx%n",
                String.format(Locale.ROOT, "acquire+release, random of %,d keys", large), r[0].opsPerSecond(), r[0].p50Micros(),
                r[0].p99Micros(), "acquire+release, random of 1,000 keys", r[1].opsPerSecond(), r[1].p50Micros(), r[1].p99Micros(),
                r[0].opsPerSecond() / r[1].opsPerSecond());
    }

    private static void pair(BlockingBackend locks, LockKey key, Duration ttl) {
        LockId id = LockId.random();
        locks.tryAcquire(key, id, ttl).orElseThrow();
        locks.release(key, id);
    }

    /** Batches of 500 documents (Firestore's limit per commit), up to 8 commits in flight. */
    private static void fill(Firestore db, String collection, int count, Map<String, Object> idle) throws Exception {
        Semaphore inFlight = new Semaphore(8);
        List<ApiFuture<?>> pending = new ArrayList<>();
        for (int from = 0; from < count; from += 500) {
            WriteBatch batch = db.batch();
            for (int k = from; k < Math.min(count, from + 500); k++) {
                Map<String, Object> doc = new HashMap<>(idle);
                doc.put("key", "scale:" + k);
                batch.set(db.collection(collection).document(DocIds.of(LockKey.of("scale:" + k))), doc);
            }
            inFlight.acquire();
            ApiFuture<?> commit = batch.commit();
            commit.addListener(inFlight::release, Runnable::run);
            pending.add(commit);
            if (pending.size() > 64) {
                for (ApiFuture<?> f : pending) {
                    f.get();
                }
                pending.clear();
            }
        }
        for (ApiFuture<?> f : pending) {
            f.get();
        }
    }

    private static void baseline(Firestore db, DocumentReference doc) throws Exception {
        db.runTransaction(tx -> {
            DocumentSnapshot s = tx.get(doc).get();
            tx.update(doc, Map.of("status", s.getString("status") == null ? "x" : "paid"));
            return null;
        }).get();
    }

    private static void print(String name, Harness.Phase a, String baseline, Harness.Phase b) {
        System.out.printf(Locale.ROOT, "%-34s %8.0f/s  p50 %5d us%n%-34s %8.0f/s  p50 %5d us%n  ratio %.2fx%n%n",
                name, a.opsPerSecond(), a.p50Micros(), baseline, b.opsPerSecond(), b.p50Micros(), a.opsPerSecond() / b.opsPerSecond());
    }
}
