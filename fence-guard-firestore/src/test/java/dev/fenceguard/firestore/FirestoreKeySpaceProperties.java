package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Transaction;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.firestore.internal.DocIds;
import dev.fenceguard.firestore.internal.LockCollections;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * Generated document paths, built from lock collection names, lock document ids (as {@link DocIds} makes
 * them) and near misses of both, at any depth, never change a lock document or another resource's
 * document: each is refused (exactly when its top-level collection is a lock collection) or isolated.
 * Emulator, every fenced call, stand-alone and inside a transaction.
 */
class FirestoreKeySpaceProperties {

    private static final Firestore DB = Emulator.newProject("keyprops");
    private static final String OTHER_LOCKS = "locks_b";
    private static final List<String> LOCK_COLLECTIONS = List.of(LockCollections.DEFAULT, OTHER_LOCKS);
    private static final List<String> LOCK_NAMES = List.of("orders", "fence", "k", "h", "a/b", "%2F", "__x__", "é", "0");
    private static final FirestoreLockBackend DEFAULT_BACKEND = FenceGuardFirestore.builder(DB).build().lockBackend();
    private static final FirestoreLockBackend OTHER_BACKEND = FenceGuardFirestore.builder(DB).withLockCollection(OTHER_LOCKS).build().lockBackend();
    private static final FencedFirestore FENCED = FenceGuardFirestore.builder(DB).withOtherLockCollections(OTHER_LOCKS)
            .withMetrics(LockMetrics.none()).build().fencedWrites();
    private static final List<String> RESOURCES = List.of("res/r1", "res/gone", "tenants/t1/" + LockCollections.DEFAULT + "/korders",
            "res/r1/" + OTHER_LOCKS + "/korders");
    private static final List<String> PROTECTED = seed();

    /** Locks with issued fences (one of each held), resources live and deleted; returns every document path they use. */
    private static List<String> seed() {
        List<String> paths = new ArrayList<>();
        for (FirestoreLockBackend backend : List.of(DEFAULT_BACKEND, OTHER_BACKEND)) {
            LockClient locks = LockClient.of(backend);
            for (String name : LOCK_NAMES) {
                for (int i = 0; i < 3; i++) {
                    Lease lease = locks.tryAcquire(name, Duration.ofMinutes(30)).orElseThrow(); // outlives the run
                    if (i < 2 || !name.equals("orders")) {
                        locks.release(lease);
                    }
                }
                paths.add(backend.documentOf(name).getPath());
            }
        }
        FenceToken seven = FenceToken.of(7);
        FENCED.set(DB.document(RESOURCES.get(0)), seven, Map.of("status", "paid")).orThrow();
        FENCED.delete(DB.document(RESOURCES.get(1)), seven).orThrow();
        FENCED.set(DB.document(RESOURCES.get(2)), seven, Map.of("status", "lookalike")).orThrow();
        FENCED.set(DB.document(RESOURCES.get(3)), seven, Map.of("status", "nested")).orThrow();
        FENCED.claim(DB.document(RESOURCES.get(3)), FenceToken.of(8)).orThrow();
        paths.addAll(RESOURCES);
        return List.copyOf(paths);
    }

    @AfterContainer
    static void close() throws Exception {
        DB.close();
    }

    enum Op { SET, UPDATE, DELETE, CLAIM, TX_SET, TX_UPDATE, TX_DELETE, TX_CHECK }

    @Provide
    Arbitrary<String> paths() {
        List<String> ids = new ArrayList<>(List.of("r1", "gone", "t1", "x", "k", "h", "korders%2F", "h" + "0".repeat(64)));
        for (String name : LOCK_NAMES) {
            ids.add(DocIds.of(LockKey.of(name)));
        }
        List<String> collections = new ArrayList<>(LOCK_COLLECTIONS);
        collections.addAll(List.of("res", "tenants", "sub", "fence_guard_locks_", "Fence_guard_locks", "fence_guard_lock",
                "locks_b ", "locks", "_fence", "__fence_guard_locks"));
        Arbitrary<String> segment = Arbitraries.oneOf(Arbitraries.of(ids), Arbitraries.of(collections));
        Arbitrary<String> collection = Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.of(collections)), Tuple.of(1, segment));
        Arbitrary<String> id = Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.of(ids)), Tuple.of(1, segment));
        Arbitrary<String> pair = Arbitraries.lazy(() -> collection.flatMap(c -> id.map(i -> c + "/" + i)));
        Arbitrary<String> built = pair.list().ofMinSize(1).ofMaxSize(3).map(l -> String.join("/", l));
        Arbitrary<String> exact = Arbitraries.of(PROTECTED);
        Arbitrary<String> nearMiss = Arbitraries.oneOf(
                exact.flatMap(p -> pair.map(tail -> p + "/" + tail)), // beneath a lock document or a resource
                exact.flatMap(p -> pair.map(head -> head + "/" + p)), // the same path one level down
                exact.flatMap(p -> id.map(i -> p.substring(0, p.lastIndexOf('/') + 1) + i))); // a sibling
        return Arbitraries.frequencyOf(Tuple.of(2, exact), Tuple.of(3, nearMiss), Tuple.of(5, built));
    }

    @Provide
    Arbitrary<Long> fences() {
        return Arbitraries.of(1L, 5L, 7L, 8L, 1_000_000_000_000L, 900_000_000_000_000L);
    }

    @Property(tries = 500)
    void aDocumentIsRefusedOrIsolated(@ForAll("paths") String path, @ForAll Op op, @ForAll("fences") long fence) throws Exception {
        boolean internal = LOCK_COLLECTIONS.contains(path.substring(0, path.indexOf('/')));
        List<String> guarded = PROTECTED.stream().filter(p -> internal || !p.equals(path)).toList();
        Map<String, Object> before = snapshot(guarded);
        Object outcome;
        try {
            outcome = run(op, DB.document(path), FenceToken.of(fence));
        } catch (IllegalArgumentException e) {
            outcome = e;
        }
        try {
            // First what matters: no lock and no other resource changed. Then the rule that guarantees it.
            assertThat(changes(before, snapshot(guarded))).as("%s on %s with fence %d changed", op, path, fence).isEmpty();
            if (internal) {
                assertThat(outcome).as("%s on %s", op, path).isInstanceOfSatisfying(IllegalArgumentException.class,
                        e -> assertThat(e).hasMessageContaining("fence-guard's own key space"));
            } else {
                assertThat(outcome).as("%s on %s", op, path).isNotInstanceOf(IllegalArgumentException.class);
            }
        } finally {
            if (!internal && !PROTECTED.contains(path)) {
                DB.document(path).delete().get();
            }
        }
    }

    private static Object run(Op op, DocumentReference doc, FenceToken fence) throws Exception {
        Map<String, Object> fields = Map.of("fence", 1L, "lockId", "zombie", "status", "x");
        return switch (op) {
            case SET -> FENCED.set(doc, fence, fields);
            case UPDATE -> FENCED.update(doc, fence, fields);
            case DELETE -> FENCED.delete(doc, fence);
            case CLAIM -> FENCED.claim(doc, fence);
            case TX_SET -> inTransaction(tx -> FENCED.set(tx, doc, fence, fields));
            case TX_UPDATE -> inTransaction(tx -> FENCED.update(tx, doc, fence, fields));
            case TX_DELETE -> inTransaction(tx -> FENCED.delete(tx, doc, fence));
            case TX_CHECK -> inTransaction(tx -> FENCED.check(tx, doc, fence));
        };
    }

    private static Object inTransaction(Transaction.Function<?> work) throws Exception {
        try {
            return DB.runTransaction(work).get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IllegalArgumentException refused) {
                throw refused;
            }
            throw e;
        }
    }

    private static List<String> changes(Map<String, Object> before, Map<String, Object> after) {
        return before.keySet().stream().filter(p -> !Objects.equals(before.get(p), after.get(p)))
                .map(p -> p + ": " + before.get(p) + " -> " + after.get(p)).toList();
    }

    /** Each document's data (or "absent"), read in one round trip, so any change to any of them shows. */
    private static Map<String, Object> snapshot(List<String> paths) throws Exception {
        List<DocumentSnapshot> docs = DB.getAll(paths.stream().map(DB::document).toArray(DocumentReference[]::new)).get();
        Map<String, Object> out = new TreeMap<>();
        for (DocumentSnapshot d : docs) {
            out.put(d.getReference().getPath(), d.exists() ? d.getData() : "absent");
        }
        return out;
    }
}
