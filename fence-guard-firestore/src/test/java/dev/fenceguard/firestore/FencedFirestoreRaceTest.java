package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.testkit.servers.TestFirestore;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A fenced write that loses its race: another writer changes the document between the write's read
 * and its conditional write. The test makes that happen, every time and at exactly that point: an
 * interceptor on the fenced writer's channel runs the other writer's change (through a second client)
 * just before the fenced write's commit goes out.
 */
class FencedFirestoreRaceTest {

    private static final String PROJECT = TestFirestore.newProjectId("race");

    private final Interloper interloper = new Interloper();
    private final Firestore db = FirestoreOptions.newBuilder()
            .setProjectId(PROJECT)
            .setCredentials(new FirestoreOptions.EmulatorCredentials())
            .setChannelProvider(InstantiatingGrpcChannelProvider.newBuilder()
                    .setEndpoint(TestFirestore.server().hostPort())
                    .setChannelConfigurator(ManagedChannelBuilder::usePlaintext)
                    .setInterceptorProvider(() -> List.of(interloper))
                    .build())
            .build().getService();
    private final Firestore other = FirestoreOptions.newBuilder()
            .setProjectId(PROJECT)
            .setEmulatorHost(TestFirestore.server().hostPort())
            .setCredentials(new FirestoreOptions.EmulatorCredentials())
            .build().getService();

    @AfterEach
    void close() throws Exception {
        db.close();
        other.close();
    }

    private FencedFirestore fenced(int attempts) {
        return FenceGuardFirestore.builder(db).withWriteAttempts(attempts).withMetrics(LockMetrics.none()).build().fencedWrites();
    }

    private static FenceToken f(long v) {
        return FenceToken.of(v);
    }

    private Map<String, Object> data(DocumentReference doc) throws Exception {
        return other.document(doc.getPath()).get().get().getData();
    }

    /** Runs {@code change} on the other client's view of {@code doc}, blocking: the race is lost before the commit leaves. */
    private Runnable change(DocumentReference doc, Consumer<DocumentReference> change) {
        return () -> change.accept(other.document(doc.getPath()));
    }

    private static void await(com.google.api.core.ApiFuture<?> f) {
        try {
            f.get();
        } catch (InterruptedException | ExecutionException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aZombieWhoseWriteLosesItsRaceToANewerHolderIsJudgedAgainAndRefused() throws Exception {
        for (FencedCall op : FencedCall.values()) {
            DocumentReference doc = db.collection("orders").document("zombie-" + op);
            other.document(doc.getPath()).set(Map.of("status", "new", "_fence", 5L)).get();
            // between the zombie's read (fence 5, so 6 is admitted) and its write, the next holder writes with 7
            interloper.beforeNextCommit(change(doc, d -> await(d.update(Map.of("status", "by 7", "_fence", 7L)))));
            WriteOutcome outcome = op.on(fenced(25).async(), doc, f(6)).toCompletableFuture().get();
            assertThat(interloper.ran()).as(op.label()).isTrue();
            assertThat(outcome).as(op.label()).isEqualTo(new WriteOutcome.Stale(doc.getPath(), 6, 7, FencePolicy.SAME_OR_NEWER));
            assertThat(data(doc)).as(op.label()).isEqualTo(Map.of("status", "by 7", "_fence", 7L));
        }
    }

    @Test
    void aSetThatLosesItsRaceStillReplacesTheDocumentAsItIsNow() throws Exception {
        DocumentReference doc = db.collection("orders").document("replace");
        other.document(doc.getPath()).set(Map.of("status", "new", "_fence", 5L)).get();
        // a field added after the set's first read must still be removed: the replacement is planned from the re-read
        interloper.beforeNextCommit(change(doc, d -> await(d.update(Map.of("late", true)))));
        assertThat(fenced(25).set(doc, f(5), Map.of("status", "replaced"))).isEqualTo(new WriteOutcome.Applied(doc.getPath(), 5));
        assertThat(interloper.ran()).isTrue();
        assertThat(data(doc)).isEqualTo(Map.of("status", "replaced", "_fence", 5L));
        assertThat(interloper.commits.get()).as("the lost commit and the one that applied").isEqualTo(2);
    }

    @Test
    void aWriteThatLosesEveryRaceFailsWithUnavailableAfterItsAttemptsAndWritesNothing() throws Exception {
        DocumentReference doc = db.collection("orders").document("contended");
        other.document(doc.getPath()).set(Map.of("n", 0L, "_fence", 5L)).get();
        AtomicInteger n = new AtomicInteger();
        interloper.beforeEveryCommit(change(doc, d -> await(d.update(Map.of("n", n.incrementAndGet())))));
        assertThatThrownBy(() -> fenced(3).update(doc, f(6), Map.of("status", "never")))
                .isInstanceOfSatisfying(FenceGuardException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
                    assertThat(e.getMessage()).contains("fenced update lost 3 races in a row");
                    assertThat(e.key()).contains(doc.getPath());
                });
        assertThat(interloper.commits.get()).as("one conditional write per attempt").isEqualTo(3);
        assertThat(data(doc)).isEqualTo(Map.of("n", 3L, "_fence", 5L));
    }

    /** Runs a change of the document (through the other client) just before a fenced write's commit is sent. */
    private static final class Interloper implements ClientInterceptor {
        final AtomicInteger commits = new AtomicInteger();
        private volatile Runnable next;
        private volatile boolean every;
        private volatile boolean ran;

        void beforeNextCommit(Runnable change) {
            ran = false;
            every = false;
            next = change;
        }

        void beforeEveryCommit(Runnable change) {
            ran = false;
            every = true;
            next = change;
        }

        boolean ran() {
            return ran;
        }

        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel channel) {
            if (method.getFullMethodName().endsWith("/Commit")) {
                commits.incrementAndGet();
                Runnable change = next;
                if (change != null) {
                    if (!every) {
                        next = null;
                    }
                    change.run();
                    ran = true;
                }
            }
            return channel.newCall(method, options);
        }
    }
}
