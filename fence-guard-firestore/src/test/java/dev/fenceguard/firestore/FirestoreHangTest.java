package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.FirestoreOptions;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockListener;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.WriteOutcome;
import dev.fenceguard.core.WriteOutcome.Applied;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.BlockingBackend;
import dev.fenceguard.testkit.servers.TestFirestore;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue #17 item 1 on Firestore: a backend that stops answering, or disappears, while a lease is held.
 * The emulator cannot be paused, so the client talks to it through a {@link HangingProxy} the test
 * owns: {@code hang()} keeps the connections open and passes nothing (a paused server), {@code
 * vanish()} closes them and refuses new ones (a killed server). A gRPC interceptor counts the RPCs
 * still out and records the deadline each one carries to the server.
 */
class FirestoreHangTest {

    private static final Duration TTL = Duration.ofMillis(1500);
    private static final Duration RELEASE_TIMEOUT = Duration.ofMillis(500);
    private static final long SLACK_NANOS = Duration.ofMillis(250).toNanos();

    private HangingProxy proxy;
    private Firestore db;
    private final Calls calls = new Calls();

    @BeforeEach
    void start() throws Exception {
        proxy = HangingProxy.start(TestFirestore.server().hostPort());
        db = FirestoreOptions.newBuilder()
                .setProjectId(TestFirestore.newProjectId("hang"))
                .setCredentials(new FirestoreOptions.EmulatorCredentials())
                .setChannelProvider(InstantiatingGrpcChannelProvider.newBuilder()
                        .setEndpoint(proxy.hostPort())
                        .setChannelConfigurator(ManagedChannelBuilder::usePlaintext)
                        .setInterceptorProvider(() -> List.of(calls))
                        .build())
                .build().getService();
    }

    @AfterEach
    void stop() {
        db.shutdownNow(); // close() would wait for the hung channel
        proxy.close();
    }

    @Test
    void aLeaseIsDeclaredLostByItsDeadlineWhileFirestoreHangsAndWithLockReturnsInTime() throws Exception {
        leaseLossIsReportedInTimeWhen(HangingProxy::hang);
    }

    @Test
    void aLeaseIsDeclaredLostByItsDeadlineWhenFirestoreIsKilledAndWithLockReturnsInTime() throws Exception {
        leaseLossIsReportedInTimeWhen(HangingProxy::vanish);
    }

    @Test
    void aCallToAHungFirestoreFailsWithTimeoutAtItsDeadlineAndLeavesNoRpcOut() throws Exception {
        FirestoreLockBackend backend = FenceGuardFirestore.builder(db).build().lockBackend();
        BlockingBackend blocking = new BlockingBackend(backend, Duration.ofMillis(400));
        LockKey key = LockKey.of("direct");
        LockId id = LockId.random();
        assertThat(BlockingBackend.of(backend).tryAcquire(key, id, Duration.ofSeconds(30))).as("connects and acquires").isPresent();
        proxy.hang();
        for (String op : List.of("acquire", "extend", "release", "lookup")) {
            assertFailsWithTimeoutAtTheDeadlineAndCancelsItsRpc(op, "direct", op, () -> {
                switch (op) {
                    case "acquire" -> blocking.tryAcquire(key, LockId.random(), Duration.ofSeconds(30));
                    case "extend" -> blocking.extend(key, id, Duration.ofSeconds(30));
                    case "release" -> blocking.release(key, id);
                    default -> blocking.lookup(key);
                }
            });
        }
        assertThat(calls.withoutDeadline()).as("RPCs sent without a deadline").isEmpty();
    }

    /** {@code call}, made to the hung proxy with a 400 ms bound, fails with TIMEOUT at that bound, and its RPC ends. */
    private void assertFailsWithTimeoutAtTheDeadlineAndCancelsItsRpc(String what, String subject, String operation,
            ThrowingCallable call) throws InterruptedException {
        long sent = System.nanoTime();
        assertThatThrownBy(call).as(what).isInstanceOfSatisfying(FenceGuardException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT);
            assertThat(e.key()).contains(subject);
            assertThat(e.getMessage()).contains(operation);
        });
        long took = System.nanoTime() - sent;
        assertThat(Duration.ofNanos(took)).as("%s gave up at its deadline", what)
                .isBetween(Duration.ofMillis(400), Duration.ofMillis(400).plusNanos(SLACK_NANOS));
        assertThat(calls.awaitNoneOpen(Duration.ofSeconds(2))).as("%s: the hung RPC was cancelled", what).isTrue();
    }

    @Test
    void everyRpcCarriesTheTimeLeftOfItsCallAsItsDeadline() {
        FirestoreLockBackend backend = FenceGuardFirestore.builder(db).build().lockBackend();
        // Generous: the emulator on a loaded 2-core machine once took over 3 s for an acquire (seen in 1 of 20 runs).
        BlockingBackend blocking = new BlockingBackend(backend, Duration.ofSeconds(20));
        LockKey key = LockKey.of("deadline");
        LockId id = LockId.random();
        assertThat(blocking.tryAcquire(key, id, TTL)).isPresent();
        assertThat(blocking.extend(key, id, TTL)).isPresent();
        assertThat(blocking.lookup(key)).isPresent();
        assertThat(blocking.release(key, id)).isTrue();
        assertThat(calls.started.get()).as("read + write per change, one read per lookup").isEqualTo(7);
        assertThat(calls.withoutDeadline()).isEmpty();
        // the call's 20 s, plus the 100 ms by which the gRPC deadline trails the call's own timer
        assertThat(calls.longestDeadline()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(20_100).toNanos());
    }

    @Test
    void aFencedWriteToAHungFirestoreFailsWithTimeoutAtItsDeadlineOnBothFacesAndLeavesNoRpcOut() throws Exception {
        DocumentReference doc = db.collection("orders").document("hung");
        // a generous budget for the write that connects; the bounded ones below get 400 ms
        assertThat(fencedWrites(Duration.ofSeconds(20)).set(doc, FenceToken.of(1), Map.of("status", "new"))).isInstanceOf(Applied.class);
        FencedFirestore fenced = fencedWrites(Duration.ofMillis(400));
        proxy.hang();
        for (FencedCall op : FencedCall.values()) {
            for (boolean async : new boolean[] {false, true}) {
                String what = op.label() + (async ? " (asynchronous)" : " (blocking)");
                assertFailsWithTimeoutAtTheDeadlineAndCancelsItsRpc(what, doc.getPath(), op.label(), () -> {
                    if (!async) {
                        op.on(fenced, doc, FenceToken.of(2));
                        return;
                    }
                    try {
                        op.on(fenced.async(), doc, FenceToken.of(2)).toCompletableFuture().get();
                    } catch (ExecutionException e) {
                        throw e.getCause();
                    }
                });
            }
        }
        assertThat(calls.withoutDeadline()).as("RPCs sent without a deadline").isEmpty();
    }

    @Test
    void everyFencedWriteRpcCarriesTheTimeLeftOfItsCallAsItsDeadline() throws Exception {
        FencedFirestore fenced = fencedWrites(Duration.ofSeconds(20));
        DocumentReference doc = db.collection("orders").document("deadline");
        for (FencedCall op : List.of(FencedCall.SET, FencedCall.UPDATE, FencedCall.CLAIM, FencedCall.DELETE)) {
            assertThat(op.on(fenced, doc, FenceToken.of(2))).as(op.label()).isInstanceOf(Applied.class);
        }
        assertThat(calls.started.get()).as("a read and a conditional write per call").isEqualTo(8);
        assertThat(calls.withoutDeadline()).isEmpty();
        assertThat(calls.longestDeadline()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(20_100).toNanos());
    }

    @Test
    void asynchronousFencedWritesWaitingOnAHungFirestoreHoldNoThreadAndACancelEndsTheirRpcs() throws Exception {
        FencedFirestore fenced = fencedWrites(Duration.ofMinutes(5)); // they wait until the test cancels them
        DocumentReference warm = db.collection("orders").document("warm");
        assertThat(fenced.set(warm, FenceToken.of(1), Map.of("status", "new"))).isInstanceOf(Applied.class);
        int threadsBefore = Thread.getAllStackTraces().size();
        proxy.hang();
        int writers = 200;
        List<CompletableFuture<WriteOutcome>> pending = new ArrayList<>();
        for (int i = 0; i < writers; i++) {
            pending.add(fenced.async().update(db.collection("orders").document("w" + i), FenceToken.of(2), Map.of("status", "paid"))
                    .toCompletableFuture());
        }
        assertThat(calls.awaitOpen(writers, Duration.ofSeconds(10))).as("every write's read is out").isTrue();
        assertThat(pending).noneMatch(CompletableFuture::isDone);
        assertThat(fenceGuardThreadsWaiting()).as("threads parked in fence-guard code").isEmpty();
        assertThat(Thread.getAllStackTraces().size() - threadsBefore).as("threads added while %d writes wait", writers)
                .isLessThan(writers / 10);
        pending.forEach(f -> f.cancel(false));
        assertThat(calls.awaitNoneOpen(Duration.ofSeconds(5))).as("cancelling a write cancels its RPC").isTrue();
    }

    private FencedFirestore fencedWrites(Duration writeTimeout) {
        return FenceGuardFirestore.builder(db).withCallTimeout(writeTimeout).withMetrics(LockMetrics.none()).build().fencedWrites();
    }

    private void leaseLossIsReportedInTimeWhen(java.util.function.Consumer<HangingProxy> fault) throws Exception {
        CountDownLatch renewed = new CountDownLatch(1);
        CountDownLatch lost = new CountDownLatch(1);
        AtomicLong lostAt = new AtomicLong();
        AtomicReference<Throwable> lostCause = new AtomicReference<>();
        AtomicReference<Boolean> validWhenLost = new AtomicReference<>();
        AtomicReference<Boolean> isLostWhenReported = new AtomicReference<>();
        LockBackend backend = new NotifyingBackend(FenceGuardFirestore.builder(db).build().lockBackend(), renewed);
        LockClient locks = LockClient.builder(backend)
                .withMetrics(LockMetrics.none())
                .withReleaseTimeout(RELEASE_TIMEOUT)
                .onEvents(new LockListener() {
                    @Override
                    public void onLeaseLost(Lease lease, Throwable cause) {
                        lostAt.set(System.nanoTime());
                        lostCause.set(cause);
                        validWhenLost.set(lease.isValid());
                        isLostWhenReported.set(lease.isLost());
                        lost.countDown();
                    }
                })
                .build();
        AtomicReference<Lease> held = new AtomicReference<>();
        AtomicLong workEnded = new AtomicLong();
        Optional<Boolean> result = locks.withLock("orders:1", TTL, Duration.ofSeconds(5), lease -> {
            held.set(lease);
            assertThat(renewed.await(5, TimeUnit.SECONDS)).as("a renewal went through before the fault").isTrue();
            fault.accept(proxy);
            assertThat(lost.await(8, TimeUnit.SECONDS)).as("onLeaseLost fired").isTrue();
            workEnded.set(System.nanoTime());
            return lease.isLost();
        });
        long returned = System.nanoTime();
        assertThat(result).as("the work saw its lease lost").contains(true);
        // No answer reached the client after the proxy's last byte to it, so the last successful renewal
        // was sent before then: the lease's local deadline is at most that instant + TTL.
        long deadlineBound = proxy.lastToClientNanos() + TTL.toNanos();
        assertThat(lostAt.get() - deadlineBound).as("loss reported after the deadline bound (ns)").isLessThanOrEqualTo(SLACK_NANOS);
        assertThat(validWhenLost.get()).isFalse();
        assertThat(isLostWhenReported.get()).isTrue();
        assertThat(held.get().isValid()).isFalse(); // released now (a lost lease is still released at the end)
        assertThat(lostCause.get()).isInstanceOfSatisfying(FenceGuardException.class,
                e -> assertThat(e.code()).isIn(ErrorCode.TIMEOUT, ErrorCode.UNAVAILABLE));
        assertThat(Duration.ofNanos(returned - workEnded.get())).as("withLock's final release is bounded")
                .isLessThanOrEqualTo(RELEASE_TIMEOUT.plusNanos(SLACK_NANOS));
        assertThat(calls.awaitNoneOpen(Duration.ofSeconds(2))).as("no RPC left out").isTrue();
        assertThat(fenceGuardThreadsWaiting()).as("threads parked in fence-guard code").isEmpty();
    }

    /**
     * Platform threads (other than this one) parked with fence-guard code on their stack. A thread that
     * is running fence-guard code at the moment of the snapshot (a timer task completing a stage) is not
     * stuck, so only parked states count.
     */
    private static List<String> fenceGuardThreadsWaiting() {
        List<String> found = new ArrayList<>();
        Thread.getAllStackTraces().forEach((thread, stack) -> {
            if (thread != Thread.currentThread() && parked(stack)
                    && Arrays.stream(stack).anyMatch(f -> f.getClassName().startsWith("dev.fenceguard."))) {
                found.add(thread.getName() + " " + thread.getState() + " " + Arrays.toString(stack));
            }
        });
        return found;
    }

    /** Whether the thread sits in a park, wait or sleep (its state and its frames are read separately, so use the frames). */
    static boolean parked(StackTraceElement[] stack) {
        if (stack.length == 0) {
            return false;
        }
        String m = stack[0].getMethodName();
        return m.startsWith("park") || m.startsWith("wait") || m.startsWith("sleep");
    }

    /** Counts the RPCs still out and records the deadline each one carries to the server. */
    private static final class Calls implements ClientInterceptor {
        final AtomicInteger started = new AtomicInteger();
        final AtomicInteger open = new AtomicInteger();
        final List<String> noDeadline = new CopyOnWriteArrayList<>();
        final Map<String, Long> deadlines = new ConcurrentHashMap<>();

        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            Deadline effective = min(options.getDeadline(), Context.current().getDeadline());
            if (effective == null) {
                noDeadline.add(method.getFullMethodName());
            } else {
                deadlines.merge("max", effective.timeRemaining(TimeUnit.NANOSECONDS), Math::max);
            }
            started.incrementAndGet();
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                @Override
                public void start(Listener<R> listener, Metadata headers) {
                    open.incrementAndGet();
                    super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                        @Override
                        public void onClose(Status status, Metadata trailers) {
                            open.decrementAndGet();
                            super.onClose(status, trailers);
                        }
                    }, headers);
                }
            };
        }

        List<String> withoutDeadline() {
            return noDeadline;
        }

        long longestDeadline() {
            return deadlines.getOrDefault("max", 0L);
        }

        /** Waits (bounded) until {@code n} RPCs are out at once. */
        boolean awaitOpen(int n, Duration limit) throws InterruptedException {
            long end = System.nanoTime() + limit.toNanos();
            while (open.get() < n) {
                if (System.nanoTime() > end) {
                    return false;
                }
                Thread.sleep(10);
            }
            return true;
        }

        /** Waits (bounded) for the cancelled RPCs to report closed: cancellation is asynchronous in gRPC. */
        boolean awaitNoneOpen(Duration limit) throws InterruptedException {
            long end = System.nanoTime() + limit.toNanos();
            while (open.get() > 0) {
                if (System.nanoTime() > end) {
                    return false;
                }
                Thread.sleep(10);
            }
            return true;
        }

        private static Deadline min(Deadline a, Deadline b) {
            return a == null ? b : b == null ? a : a.minimum(b);
        }
    }

    /** Counts down {@code renewed} when an extension succeeds; otherwise the Firestore backend itself. */
    private record NotifyingBackend(LockBackend backend, CountDownLatch renewed) implements LockBackend {
        @Override
        public String name() {
            return backend.name();
        }

        @Override
        public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
            return backend.tryAcquire(key, lockId, ttl, timeout);
        }

        @Override
        public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
            return backend.release(key, lockId, timeout);
        }

        @Override
        public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
            return backend.extend(key, lockId, ttl, timeout).whenComplete((expiry, error) -> {
                if (expiry != null && expiry.isPresent()) {
                    renewed.countDown();
                }
            });
        }

        @Override
        public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
            return backend.lookup(key, timeout);
        }
    }
}
