package dev.fenceguard.firestore;

import static dev.fenceguard.firestore.HorizonClock.MINUTE;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.fenceguard.core.FenceStrategy;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.Purge;
import dev.fenceguard.core.PurgeResult;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.WriteOutcome.Stale;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.testkit.servers.TestFirestore;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The purges' re-checks against the writes that race them, each race made to happen at exactly one
 * point by a gRPC interceptor on one client, which runs the other side's call (through a second client)
 * just before a given RPC leaves: between a purge's query and its re-read of the candidates, between the
 * re-read and the delete, and between a zombie's read and its write.
 */
class FirestorePurgeRaceTest {

    private static final String PROJECT = TestFirestore.newProjectId("purgerace");
    private static final Duration H = Duration.ofHours(1);
    private static final Duration M = Duration.ofMinutes(5);

    private final Hook hook = new Hook();
    private final Firestore db = FirestoreOptions.newBuilder()
            .setProjectId(PROJECT)
            .setCredentials(new FirestoreOptions.EmulatorCredentials())
            .setChannelProvider(InstantiatingGrpcChannelProvider.newBuilder()
                    .setEndpoint(TestFirestore.server().hostPort())
                    .setChannelConfigurator(ManagedChannelBuilder::usePlaintext)
                    .setInterceptorProvider(() -> List.of(hook))
                    .build())
            .build().getService();
    private final Firestore other = Emulator.clientOf(PROJECT);
    private final HorizonClock.Metrics metrics = new HorizonClock.Metrics();
    private final FenceGuardFirestore hooked = FenceGuardFirestore.builder(db).withHorizon(H).withClockMargin(M).withMetrics(metrics).build();
    private final FenceGuardFirestore plain = FenceGuardFirestore.builder(other).withHorizon(H).withClockMargin(M).withMetrics(metrics).build();

    @AfterEach
    void close() throws Exception {
        db.close();
        other.close();
    }

    private static void tombstone(DocumentReference doc, long fence) throws Exception {
        doc.set(Map.of("_fence", fence, "_deleted", true)).get();
    }

    private Map<String, Object> data(DocumentReference doc) throws Exception {
        return other.document(doc.getPath()).get().get().getData();
    }

    private static void expect(WriteOutcome outcome, Class<? extends WriteOutcome> expected) {
        assertThat(outcome).isInstanceOf(expected);
    }

    @Test
    void aTombstoneRevivedBetweenThePurgesQueryAndItsReReadStays() throws Exception {
        CollectionReference c = db.collection("revived");
        long p = HorizonClock.tickAgo(other, H.plus(M));
        long young = HorizonClock.tickAgo(other, Duration.ZERO);
        for (String id : List.of("a", "b", "c")) {
            tombstone(other.document(c.document(id).getPath()), p - MINUTE);
        }
        DocumentReference b = other.document(c.document("b").getPath());
        // the query has answered (b is a candidate); before the first re-read leaves, a new holder recreates b
        hook.once("/RunQuery", "/BatchGetDocuments",
                () -> expect(plain.fencedWrites().set(b, FenceToken.of(young), Map.of("status", "back")), WriteOutcome.Applied.class));
        PurgeResult r = hooked.fencedWrites().purge(c, Purge.ofDefaults());
        assertThat(hook.ran()).isTrue();
        assertThat(r.removed()).isEqualTo(2);
        assertThat(data(c.document("b"))).isEqualTo(Map.of("status", "back", "_fence", young));
        assertThat(other.document(c.document("a").getPath()).get().get().exists()).isFalse();
        assertThat(other.document(c.document("c").getPath()).get().get().exists()).isFalse();
        assertThat(metrics.total("tombstone")).isEqualTo(2);
    }

    @Test
    void aTombstoneRaisedBetweenThePurgesQueryAndItsReReadStays() throws Exception {
        CollectionReference c = db.collection("raised");
        long p = HorizonClock.tickAgo(other, H.plus(M));
        long young = HorizonClock.tickAgo(other, Duration.ZERO);
        DocumentReference t = other.document(c.document("t").getPath());
        tombstone(t, p - MINUTE);
        hook.once("/RunQuery", "/BatchGetDocuments",
                () -> expect(plain.fencedWrites().delete(t, FenceToken.of(young)), WriteOutcome.Applied.class));
        assertThat(hooked.fencedWrites().purge(c, Purge.ofDefaults()).removed()).isZero();
        assertThat(hook.ran()).isTrue();
        assertThat(data(t)).isEqualTo(Map.of("_fence", young, "_deleted", true));
    }

    @Test
    void aTombstoneRevivedBetweenTheReReadAndTheDeleteStays() throws Exception {
        CollectionReference c = db.collection("late");
        long p = HorizonClock.tickAgo(other, H.plus(M));
        long young = HorizonClock.tickAgo(other, Duration.ZERO);
        DocumentReference t = other.document(c.document("t").getPath());
        tombstone(t, p - MINUTE);
        // the re-read saw a removable tombstone; before its conditional delete leaves, a new holder recreates it
        hook.once(null, "/Commit",
                () -> expect(plain.fencedWrites().set(t, FenceToken.of(young), Map.of("status", "back")), WriteOutcome.Applied.class));
        assertThat(hooked.fencedWrites().purge(c, Purge.ofDefaults()).removed()).isZero();
        assertThat(hook.ran()).isTrue();
        assertThat(data(t)).isEqualTo(Map.of("status", "back", "_fence", young));
    }

    @Test
    void aZombieWhoseTombstoneIsPurgedBetweenItsReadAndItsWriteIsRefusedByTheHorizon() throws Exception {
        CollectionReference c = db.collection("zombie");
        long p = HorizonClock.tickAgo(other, H.plus(M));
        DocumentReference t = c.document("t");
        tombstone(other.document(t.getPath()), p - 2 * MINUTE);
        FenceToken zombie = FenceToken.of(p - MINUTE); // admitted by the tombstone, and older than the horizon
        AtomicReference<PurgeResult> purged = new AtomicReference<>();
        // the zombie read the tombstone and would replace it; before its write leaves, the purge removes the tombstone
        hook.once(null, "/Commit", () -> purged.set(plain.fencedWrites().purge(other.collection("zombie"), Purge.ofDefaults())));
        WriteOutcome outcome = hooked.fencedWrites().set(t, zombie, Map.of("status", "zombie"));
        assertThat(hook.ran()).isTrue();
        assertThat(purged.get().removed()).isEqualTo(1);
        assertThat(outcome).isInstanceOf(Stale.class);
        assertThat(((Stale) outcome).reason()).isEqualTo(Stale.Reason.BELOW_HORIZON);
        assertThat(other.document(t.getPath()).get().get().exists()).as("the zombie created nothing").isFalse();
    }

    @Test
    void aLockAcquiredBetweenThePurgesQueryAndItsReReadKeepsItsDocument() throws Exception {
        FenceGuardFirestore floored = FenceGuardFirestore.builder(db).withFenceStrategy(FenceStrategy.CLOCK_FLOORED)
                .withClockMargin(Duration.ZERO).withLockCollection("racing_locks").withMetrics(metrics).build();
        FenceGuardFirestore otherFloored = FenceGuardFirestore.builder(other).withFenceStrategy(FenceStrategy.CLOCK_FLOORED)
                .withClockMargin(Duration.ZERO).withLockCollection("racing_locks").withMetrics(metrics).build();
        Duration t = Duration.ofSeconds(10);
        LockKey key = LockKey.of("orders:race");
        LockId firstHolder = LockId.random();
        Grant first = otherFloored.lockBackend().tryAcquire(key, firstHolder, Duration.ofMinutes(1), t).toCompletableFuture().get()
                .orElseThrow();
        assertThat(otherFloored.lockBackend().release(key, firstHolder, t).toCompletableFuture().get()).isTrue();
        // the purge's query finds the free document; before its re-read leaves, a new holder takes the lock
        AtomicReference<Optional<Grant>> raced = new AtomicReference<>();
        hook.once("/RunQuery", "/BatchGetDocuments", () -> raced.set(join(otherFloored.lockBackend().tryAcquire(key, LockId.random(),
                Duration.ofMinutes(1), t))));
        PurgeResult r = floored.purgeLocks(Purge.ofDefaults());
        assertThat(hook.ran()).isTrue();
        assertThat(r.removed()).isZero();
        Grant second = raced.get().orElseThrow();
        assertThat(second.fence()).isGreaterThan(first.fence());
        assertThat(other.document(otherFloored.lockBackend().documentOf(key.value()).getPath()).get().get().getLong("fence"))
                .as("the held lock's document stays").isEqualTo(second.fence());
    }

    private static Optional<Grant> join(java.util.concurrent.CompletionStage<Optional<Grant>> s) {
        try {
            return s.toCompletableFuture().get();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Runs a change once, just before the first RPC named {@code before} leaves (after one named
     * {@code after} has left, if given). The change runs on the thread that starts the RPC, so the RPC
     * leaves only once the change is done.
     */
    private static final class Hook implements ClientInterceptor {
        private final AtomicReference<Runnable> change = new AtomicReference<>();
        private volatile String after;
        private volatile String before;
        private final AtomicBoolean afterSeen = new AtomicBoolean();
        private volatile boolean ran;

        void once(String afterMethod, String beforeMethod, Runnable run) {
            after = afterMethod;
            before = beforeMethod;
            afterSeen.set(afterMethod == null);
            ran = false;
            change.set(run);
        }

        boolean ran() {
            return ran;
        }

        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel channel) {
            String name = method.getFullMethodName();
            if (change.get() != null) {
                if (after != null && name.endsWith(after)) {
                    afterSeen.set(true);
                } else if (afterSeen.get() && name.endsWith(before)) {
                    Runnable run = change.getAndSet(null);
                    if (run != null) {
                        run.run();
                        ran = true;
                    }
                }
            }
            return channel.newCall(method, options);
        }
    }
}
