package dev.fenceguard.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.idempotency.Fingerprint;
import dev.fenceguard.core.idempotency.IdempotencyInfo;
import dev.fenceguard.core.idempotency.IdempotencyResult;
import dev.fenceguard.core.idempotency.IdempotencyStore;
import dev.fenceguard.core.idempotency.ResultCodec;
import dev.fenceguard.core.leader.LeaderCandidate;
import dev.fenceguard.core.leader.LeaderElection;
import dev.fenceguard.core.leader.LeaderInfo;
import dev.fenceguard.core.leader.Leadership;
import dev.fenceguard.core.leader.LeadershipListener;
import dev.fenceguard.core.singleflight.Singleflight;
import dev.fenceguard.core.singleflight.SingleflightMetrics;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyEntry;
import dev.fenceguard.core.spi.IdempotencyState;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The Mono faces of the primitives on one backend: each emits what its asynchronous face answers, and a
 * cancel leaves nothing behind (no lease held after the work, no idempotency key left claimed). Every wait
 * is on a latch or a stage the code under test completes. Each backend's test nests a subclass.
 */
abstract class ReactivePrimitivesContract {

    private static final Duration LONG = Duration.ofSeconds(30);
    private static final long WAIT_S = 30;
    private static final ResultCodec<String> IDEM_TEXT = ResultCodec.utf8();

    private final String prefix = "reactive-primitives:" + UUID.randomUUID().toString().substring(0, 8) + ":";

    abstract LockBackend lockBackend();

    abstract IdempotencyBackend idempotencyBackend();

    abstract FlightStore flightStore();

    private LockClient client() {
        return LockClient.builder(lockBackend()).withMetrics(LockMetrics.none()).build();
    }

    private String key(String name) {
        return prefix + name;
    }

    private static void await(CountDownLatch latch, String what) throws InterruptedException {
        assertThat(latch.await(WAIT_S, TimeUnit.SECONDS)).as(what).isTrue();
    }

    @Test
    void aCancelledSingleflightCallerLeavesTheFlightToFinishAndFreeItsLease() throws InterruptedException {
        LockClient client = client();
        ReactiveSingleflight flights = ReactiveSingleflight.of(Singleflight.builder(client, flightStore())
                .withMetrics(SingleflightMetrics.none()).build());
        String k = key("flight");
        String lockKey = flights.async().lockKeyOf(k);
        Sinks.One<String> gate = Sinks.one();
        CountDownLatch started = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        Mono<String> flight = flights.run(k, LONG, dev.fenceguard.core.singleflight.ResultCodec.utf8(), lease -> {
            runs.incrementAndGet();
            started.countDown();
            return gate.asMono();
        });
        assertThat(runs).as("nothing before subscription").hasValue(0);
        Disposable caller = flight.subscribe();
        await(started, "the leader's work started");
        caller.dispose();
        assertThat(client.lookup(lockKey)).as("the flight's lease is held while its work runs, whoever listens").isPresent();

        gate.tryEmitValue("report of November");
        String again = flights.run(k, LONG, dev.fenceguard.core.singleflight.ResultCodec.utf8(),
                lease -> Mono.error(new AssertionError("a retained result is not computed again"))).block(Duration.ofSeconds(WAIT_S));
        assertThat(again).as("the flight published its result after its caller left").isEqualTo("report of November");
        assertThat(runs).hasValue(1);
        assertThat(client.lookup(lockKey)).as("the lease ended with the work").isEmpty();
    }

    @Test
    void aCancelWhileTheIdempotentWorkRunsCancelsItAndLeavesTheKeyRetryable() throws InterruptedException {
        RecordSignal backend = new RecordSignal(idempotencyBackend(), null);
        ReactiveIdempotencyStore store = ReactiveIdempotencyStore.of(IdempotencyStore.builder(backend).withMetrics(dev.fenceguard.core.idempotency.IdempotencyMetrics.none()).build());
        LockClient client = client();
        String k = key("idem-running");
        Fingerprint fp = Fingerprint.ofParts("charge", "4200");
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch workCancelled = new CountDownLatch(1);
        FenceToken first;
        try (Lease lease = client.tryAcquire(k, LONG).orElseThrow()) {
            first = lease.fence();
            Disposable call = store.call(k, fp, lease, IDEM_TEXT, () -> Mono.<String>never()
                    .doOnSubscribe(s -> started.countDown())
                    .doOnCancel(workCancelled::countDown)).subscribe();
            await(started, "the work started");
            call.dispose();
            await(workCancelled, "the cancel reached the work");
            await(backend.recorded, "the call recorded its end");
        }
        IdempotencyInfo info = store.lookup(k).block(Duration.ofSeconds(WAIT_S));
        assertThat(info).isNotNull();
        assertThat(info.status()).as("not left claimed").isEqualTo(IdempotencyInfo.Status.FAILED_RETRYABLE);
        assertThat(info.fence()).isEqualTo(first);
        try (Lease next = client.tryAcquire(k, LONG).orElseThrow()) {
            assertThat(store.call(k, fp, next, IDEM_TEXT, () -> Mono.just("ch_1")).block(Duration.ofSeconds(WAIT_S)))
                    .as("the next holder runs the work at once").isEqualTo(new IdempotencyResult.Executed<>("ch_1", next.fence()));
        }
    }

    @Test
    void aCancelBeforeTheClaimIsAnsweredNeverStartsTheWork() throws InterruptedException {
        CompletableFuture<Void> gate = new CompletableFuture<>();
        RecordSignal backend = new RecordSignal(idempotencyBackend(), gate);
        ReactiveIdempotencyStore store = ReactiveIdempotencyStore.of(IdempotencyStore.builder(backend).withMetrics(dev.fenceguard.core.idempotency.IdempotencyMetrics.none()).build());
        LockClient client = client();
        String k = key("idem-claiming");
        AtomicInteger runs = new AtomicInteger();
        try (Lease lease = client.tryAcquire(k, LONG).orElseThrow()) {
            Disposable call = store.call(k, Fingerprint.ofParts("refund"), lease, IDEM_TEXT,
                    () -> Mono.fromCallable(() -> "rf_" + runs.incrementAndGet())).subscribe();
            await(backend.claiming, "the claim was sent");
            call.dispose();
            gate.complete(null);
            await(backend.recorded, "the call recorded its end");
        }
        assertThat(runs).as("the work never started").hasValue(0);
        assertThat(store.lookup(k).map(IdempotencyInfo::status).block(Duration.ofSeconds(WAIT_S)))
                .isEqualTo(IdempotencyInfo.Status.FAILED_RETRYABLE);
    }

    @Test
    void theElectionsMonosTellTheLeaderAndStopFreesTheLock() throws InterruptedException {
        LockClient client = client();
        String name = key("leader");
        CountDownLatch elected = new CountDownLatch(1);
        LeaderElection blocking = LeaderElection.builder(client, name).withMetrics(dev.fenceguard.core.leader.LeaderMetrics.none())
                .onEvents(new LeadershipListener() {
                    @Override
                    public void elected(Leadership leadership) {
                        elected.countDown();
                    }
                }).build();
        ReactiveLeaderElection election = ReactiveLeaderElection.of(blocking);
        Mono<Void> stop = election.stop();
        election.start();
        await(elected, "elected");
        FenceToken term = election.leadership().orElseThrow().term();
        List<LeaderCandidate> faces = List.of(blocking, blocking.async(), election);
        for (LeaderCandidate face : faces) {
            assertThat(face.async()).as("one candidate behind every face").isSameAs(blocking.async());
            assertThat(face.name()).isEqualTo(name);
            assertThat(face.isRunning()).isTrue();
            assertThat(face.isLeader()).isTrue();
            assertThat(face.leadership().orElseThrow().term()).isEqualTo(term);
        }
        LeaderInfo seen = election.currentLeader().block(Duration.ofSeconds(WAIT_S));
        assertThat(seen).isNotNull();
        assertThat(seen.term()).isEqualTo(term);
        assertThat(ReactiveLeaderElection.currentLeader(ReactiveLockClient.of(client), name).map(LeaderInfo::term)
                .block(Duration.ofSeconds(WAIT_S))).as("anyone can ask").isEqualTo(term);

        stop.block(Duration.ofSeconds(WAIT_S));
        assertThat(faces).allSatisfy(face -> {
            assertThat(face.isRunning()).as("stopped through the Mono face: stopped on every face").isFalse();
            assertThat(face.isLeader()).isFalse();
            assertThat(face.leadership()).isEmpty();
        });
        assertThat(client.lookup(name)).as("stopping released the lock").isEmpty();
        assertThat(election.currentLeader().blockOptional(Duration.ofSeconds(WAIT_S))).as("no leader: empty").isEmpty();
    }

    /** Tells when a claim is sent and when a record is answered; holds claims until {@code gate} completes, if given. */
    private static final class RecordSignal implements IdempotencyBackend {
        final CountDownLatch claiming = new CountDownLatch(1);
        final CountDownLatch recorded = new CountDownLatch(1);
        private final IdempotencyBackend inner;
        private final CompletableFuture<Void> gate;

        RecordSignal(IdempotencyBackend inner, CompletableFuture<Void> gate) {
            this.inner = inner;
            this.gate = gate;
        }

        @Override
        public String name() {
            return inner.name();
        }

        @Override
        public CompletionStage<IdempotencyEntry> claim(LockKey key, String fingerprint, long fence, Duration ttl,
                Duration retention, Duration timeout) {
            claiming.countDown();
            return gate == null ? inner.claim(key, fingerprint, fence, ttl, retention, timeout)
                    : gate.thenCompose(open -> inner.claim(key, fingerprint, fence, ttl, retention, timeout));
        }

        @Override
        public CompletionStage<OptionalLong> record(LockKey key, long fence, IdempotencyState state, byte[] result,
                Duration retention, Duration timeout) {
            return inner.record(key, fence, state, result, retention, timeout).whenComplete((r, e) -> recorded.countDown());
        }

        @Override
        public CompletionStage<Optional<IdempotencyEntry>> lookup(LockKey key, Duration timeout) {
            return inner.lookup(key, timeout);
        }

        @Override
        public CompletionStage<Integer> purge(int limit, Duration timeout) {
            return inner.purge(limit, timeout);
        }
    }
}
