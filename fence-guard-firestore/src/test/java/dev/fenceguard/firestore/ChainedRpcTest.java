package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.api.core.ApiFuture;
import com.google.api.core.ApiFutureCallback;
import com.google.api.core.ApiFutures;
import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import com.google.common.util.concurrent.MoreExecutors;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.IdempotencyState;
import dev.fenceguard.testkit.servers.TestFirestore;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An RPC that a user starts from a callback chained on a fence-guard stage succeeds, on every public
 * stage of the module: the callback does not run inside the gRPC context of fence-guard's operation,
 * which is cancelled when the operation ends and would cancel the user's RPC with it.
 *
 * <p>The callback has to be chained before the stage completes, so that it runs where fence-guard
 * completes the stage: the test holds every answer of the operation's first RPC (on the channel, with
 * an interceptor) until the callback is chained, and checks that the callback then ran on another thread
 * than the test's.
 */
class ChainedRpcTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Hold HOLD = new Hold();
    private static final Firestore DB = FirestoreOptions.newBuilder()
            .setProjectId(TestFirestore.newProjectId("chained"))
            .setCredentials(new FirestoreOptions.EmulatorCredentials())
            .setChannelProvider(InstantiatingGrpcChannelProvider.newBuilder()
                    .setEndpoint(TestFirestore.server().hostPort())
                    .setChannelConfigurator(b -> b.usePlaintext().intercept(HOLD))
                    .build())
            .build().getService();
    private static final FenceGuardFirestore FIRESTORE = FenceGuardFirestore.builder(DB).withMetrics(LockMetrics.none()).build();
    private static final String RUN = UUID.randomUUID().toString().substring(0, 8);

    /** Holds the answers of calls started while armed until the gate opens; later calls pass. */
    private static final class Hold implements ClientInterceptor {
        private volatile CountDownLatch gate;

        void arm(CountDownLatch g) {
            gate = g;
        }

        void disarm() {
            gate = null;
        }

        @Override
        public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
            CountDownLatch g = gate;
            ClientCall<Q, A> call = next.newCall(method, options);
            if (g == null) {
                return call;
            }
            return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
                @Override
                public void start(Listener<A> listener, Metadata headers) {
                    super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                        @Override
                        public void onHeaders(Metadata h) {
                            await(g);
                            super.onHeaders(h);
                        }

                        @Override
                        public void onMessage(A message) {
                            await(g);
                            super.onMessage(message);
                        }

                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            await(g);
                            super.onClose(status, trailers);
                        }
                    }, headers);
                }
            };
        }

        private static void await(CountDownLatch g) {
            try {
                if (!g.await(30, TimeUnit.SECONDS)) {
                    throw new AssertionError("the test never opened the gate");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    @BeforeAll
    static void warmUp() {
        FIRESTORE.lockBackend().warmUp(Duration.ofMinutes(2)).toCompletableFuture().join();
    }

    @AfterAll
    static void close() throws Exception {
        DB.close();
    }

    private static DocumentReference doc(String name) {
        return DB.collection("chained_" + RUN).document(name);
    }

    private static LockKey key(String name) {
        return LockKey.of("chained:" + RUN + ":" + name);
    }

    static Stream<Arguments> stages() {
        AsyncFencedFirestore fenced = FIRESTORE.fencedWrites().async();
        FirestoreLockBackend locks = FIRESTORE.lockBackend();
        FirestoreIdempotencyBackend idempotency = FIRESTORE.idempotencyBackend();
        FirestoreFlightStore flights = FIRESTORE.flightStore();
        LockClient client = LockClient.builder(locks).withMetrics(LockMetrics.none()).build();
        FenceToken f = FenceToken.of(7);
        return Stream.of(
                stage("fenced claim", () -> fenced.claim(doc("claim"), f)),
                stage("fenced set", () -> fenced.set(doc("set"), f, Map.of("v", 1))),
                stage("fenced update", () -> fenced.update(doc("set"), f, Map.of("v", 2))),
                stage("fenced delete", () -> fenced.delete(doc("delete"), f)),
                stage("fenced warm-up", fenced::warmUp),
                stage("lock backend tryAcquire", () -> locks.tryAcquire(key("backend"), LockId.random(), TIMEOUT, TIMEOUT)),
                stage("lock backend lookup", () -> locks.lookup(key("backend"), TIMEOUT)),
                stage("lock client tryAcquire", () -> client.async().tryAcquire(key("client").value(), TIMEOUT)),
                stage("lock client lookup", () -> client.async().lookup(key("client").value())),
                stage("idempotency claim", () -> idempotency.claim(key("idem"), "fp", 1, TIMEOUT, TIMEOUT, TIMEOUT)),
                stage("idempotency record", () -> idempotency.record(key("idem"), 1, IdempotencyState.COMPLETED, new byte[] {1},
                        TIMEOUT, TIMEOUT)),
                stage("idempotency lookup", () -> idempotency.lookup(key("idem"), TIMEOUT)),
                stage("idempotency purge", () -> idempotency.purge(10, TIMEOUT)),
                stage("flight begin", () -> flights.begin(key("flight"), 1, TIMEOUT)),
                stage("flight publish", () -> flights.publish(key("flight"), 1, new byte[] {1}, TIMEOUT, TIMEOUT)),
                stage("flight read", () -> flights.read(key("flight"), TIMEOUT)),
                stage("flight wake", () -> flights.wake(key("flight"), TIMEOUT)));
    }

    private static Arguments stage(String name, Supplier<CompletionStage<?>> start) {
        return Arguments.of(name, start);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stages")
    void anRpcStartedFromACallbackOnTheStageSucceeds(String name, Supplier<CompletionStage<?>> start) throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        CompletableFuture<DocumentSnapshot> chained;
        HOLD.arm(gate);
        try {
            CompletionStage<?> stage = start.get(); // its first RPC's answer waits for the gate
            chained = stage.thenCompose(done -> {
                ranOn.set(Thread.currentThread());
                return future(doc("read-in-callback").get());
            }).toCompletableFuture();
        } finally {
            HOLD.disarm();
            gate.countDown();
        }
        DocumentSnapshot read = chained.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(read.exists()).as("the document read in the callback").isFalse();
        assertThat(ranOn.get()).as("the callback ran where fence-guard completed the stage").isNotSameAs(Thread.currentThread());
    }

    private static <T> CompletableFuture<T> future(ApiFuture<T> f) {
        CompletableFuture<T> out = new CompletableFuture<>();
        ApiFutures.addCallback(f, new ApiFutureCallback<>() {
            @Override
            public void onSuccess(T value) {
                out.complete(value);
            }

            @Override
            public void onFailure(Throwable t) {
                out.completeExceptionally(t);
            }
        }, MoreExecutors.directExecutor());
        return out;
    }
}
