package dev.fenceguard.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.idempotency.Fingerprint;
import dev.fenceguard.core.idempotency.IdempotencyInfo;
import dev.fenceguard.core.idempotency.IdempotencyMetrics;
import dev.fenceguard.core.idempotency.IdempotencyResult;
import dev.fenceguard.core.idempotency.IdempotencyStore;
import dev.fenceguard.core.idempotency.ResultCodec;
import dev.fenceguard.core.internal.ManualClock;
import dev.fenceguard.core.leader.LeaderElection;
import dev.fenceguard.core.leader.LeaderInfo;
import dev.fenceguard.core.leader.LeaderMetrics;
import dev.fenceguard.core.leader.Leadership;
import dev.fenceguard.core.leader.LeadershipListener;
import dev.fenceguard.core.memory.InMemoryFlightStore;
import dev.fenceguard.core.memory.InMemoryIdempotencyBackend;
import dev.fenceguard.core.memory.InMemoryLockBackend;
import dev.fenceguard.core.singleflight.Singleflight;
import dev.fenceguard.core.singleflight.SingleflightMetrics;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyEntry;
import dev.fenceguard.core.spi.IdempotencyState;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A thread blocked in a blocking face, interrupted while the backend holds its call: a method that
 * declares {@link InterruptedException} throws it and leaves nothing held (the grant that arrives later
 * is released, and counted); a method that cannot keeps waiting for the backend's real answer, returns
 * it, and sets the interrupt status again. Never a {@code TIMEOUT} the backend did not cause. Every step
 * is ordered by latches; the clock is manual, so no timeout can fire on its own.
 */
@Timeout(60) // a guard against a hang, not a timing assertion
class BlockingFacesInterruptTest {

    private static final Duration TTL = Duration.ofSeconds(30);

    private final ManualClock time = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final InMemoryLockBackend memory = new InMemoryLockBackend(time);

    @Test
    void tryAcquireInterruptedWhileTheGrantIsHeldReturnsTheGrantAndKeepsTheInterrupt() throws Exception {
        HeldLocks locks = new HeldLocks(memory, "acquire");
        LockClient client = client(locks);
        Outcome<Optional<Lease>> out = Outcome.run(() -> client.tryAcquire("k", TTL));
        var answered = out.interruptedThenAnswered(locks.sent, locks::answer);
        Lease lease = answered.orElseThrow();
        assertThat(client.release(lease)).isTrue();
        assertThat(locks.releases).as("the grant was handed out and released once").hasValue(1);
        assertThat(client.lookup("k")).isEmpty();
    }

    @Test
    void singleflightRunInterruptedWhileTheLeadersGrantIsHeldThrowsAndTheLateGrantIsReleased() throws Exception {
        HeldLocks locks = new HeldLocks(memory, "acquire");
        LockClient client = client(locks);
        Singleflight flights = Singleflight.builder(client, new InMemoryFlightStore(time)).withTimeSource(time)
                .withMetrics(SingleflightMetrics.none()).withMaxWait(Duration.ofDays(1)).withPollInterval(Duration.ofDays(1))
                .withCallTimeout(Duration.ofMinutes(10)).build();
        Outcome<String> out = Outcome.run(() -> flights.run("report", TTL, dev.fenceguard.core.singleflight.ResultCodec.utf8(),
                lease -> "report"));
        locks.sent.await();
        out.thread.interrupt();
        out.thread.join();

        assertThat(out.error.get()).isInstanceOf(InterruptedException.class);
        assertThat(out.interruptedOnReturn.get()).as("InterruptedException clears the status, as the JDK's do").isFalse();
        locks.answer(); // the grant arrives after the caller gave up
        locks.released.await();
        assertThat(locks.releases).as("the late grant is released once").hasValue(1);
        assertThat(client.lookup(flights.lockKeyOf("report"))).isEmpty();
    }

    @Test
    void idempotencyCallInterruptedWhileItsClaimIsHeldThrowsBeforeTheWorkRuns() throws Exception {
        HeldIdempotency backend = new HeldIdempotency(new InMemoryIdempotencyBackend(time), "claim");
        IdempotencyStore store = store(backend);
        LockClient client = client(new HeldLocks(memory, "none"));
        Lease lease = client.tryAcquire("order:1", TTL).orElseThrow();
        AtomicInteger works = new AtomicInteger();
        Outcome<IdempotencyResult<String>> out = Outcome.run(() -> store.call("charge:1", Fingerprint.ofParts("1"), lease,
                ResultCodec.utf8(), () -> "charged " + works.incrementAndGet()));
        backend.sent.await();
        out.thread.interrupt();
        out.thread.join();

        assertThat(out.error.get()).isInstanceOf(InterruptedException.class);
        assertThat(works).as("the work never ran").hasValue(0);
        backend.answer(); // the claim lands late: it is the lease holder's, and its next call takes it up
        IdempotencyResult<String> retry = store.call("charge:1", Fingerprint.ofParts("1"), lease, ResultCodec.utf8(),
                () -> "charged " + works.incrementAndGet());
        assertThat(retry).isInstanceOf(IdempotencyResult.Executed.class);
        assertThat(retry.result()).contains("charged 1");
        lease.close();
        assertThat(client.lookup("order:1")).isEmpty();
    }

    @Test
    void idempotencyCallInterruptedWhileItsRecordIsHeldReturnsTheOutcomeAndKeepsTheInterrupt() throws Exception {
        HeldIdempotency backend = new HeldIdempotency(new InMemoryIdempotencyBackend(time), "record");
        IdempotencyStore store = store(backend);
        Lease lease = client(new HeldLocks(memory, "none")).tryAcquire("order:2", TTL).orElseThrow();
        Outcome<IdempotencyResult<String>> out = Outcome.run(() -> store.call("charge:2", Fingerprint.ofParts("2"), lease,
                ResultCodec.utf8(), () -> "charged"));
        var answered = out.interruptedThenAnswered(backend.sent, backend::answer);
        assertThat(answered.result()).contains("charged");
        assertThat(store.lookup("charge:2")).map(IdempotencyInfo::status).contains(IdempotencyInfo.Status.COMPLETED);
        lease.close();
    }

    @Test
    void leaderStopInterruptedWhileTheReleaseIsHeldWaitsForItAndKeepsTheInterrupt() throws Exception {
        HeldLocks locks = new HeldLocks(memory, "release");
        LockClient client = client(locks);
        CountDownLatch elected = new CountDownLatch(1);
        LeaderElection election = LeaderElection.builder(client, "scheduler").withTimeSource(time)
                .withMetrics(LeaderMetrics.none()).onEvents(new LeadershipListener() {
                    @Override
                    public void elected(Leadership term) {
                        elected.countDown();
                    }
                }).build();
        election.start();
        elected.await();
        Outcome<Boolean> out = Outcome.run(() -> {
            election.stop();
            return true;
        });
        out.interruptedThenAnswered(locks.sent, locks::answer);
        assertThat(locks.releases).as("the term's lock was released once, before stop() returned").hasValue(1);
        assertThat(election.currentLeader()).isEmpty();
    }

    @Test
    void currentLeaderInterruptedWhileTheLookupIsHeldReturnsTheAnswerAndKeepsTheInterrupt() throws Exception {
        HeldLocks locks = new HeldLocks(memory, "lookup");
        LockClient client = client(locks);
        Lease held = client.tryAcquire("scheduler", TTL).orElseThrow();
        Outcome<Optional<LeaderInfo>> out = Outcome.run(() -> LeaderElection.currentLeader(client, "scheduler"));
        var answered = out.interruptedThenAnswered(locks.sent, locks::answer);
        assertThat(answered).map(LeaderInfo::term).contains(held.fence());
        held.close();
        assertThat(locks.releases).hasValue(1);
    }

    /** A store whose calls the test's held backend answers; the call timeout is far beyond any test. */
    private static IdempotencyStore store(IdempotencyBackend backend) {
        return IdempotencyStore.builder(backend).withMetrics(IdempotencyMetrics.none()).withCallTimeout(Duration.ofMinutes(10)).build();
    }

    private LockClient client(LockBackend backend) {
        return LockClient.builder(backend).withTimeSource(time).withMetrics(LockMetrics.none()).build();
    }

    /** What a blocking call on a thread of its own returned or threw, and whether its thread was interrupted then. */
    private record Outcome<T>(Thread thread, AtomicReference<T> value, AtomicReference<Throwable> error,
            AtomicBoolean interruptedOnReturn) {

        /**
         * For a call that cannot throw {@link InterruptedException}: once it is sent, interrupts its thread,
         * lets the backend answer, and returns what the call returned, having checked that it threw nothing
         * and set the interrupt status again.
         */
        T interruptedThenAnswered(CountDownLatch sent, Runnable answer) throws InterruptedException {
            sent.await();
            thread.interrupt();
            answer.run();
            thread.join();
            assertThat(error.get()).isNull();
            assertThat(interruptedOnReturn.get()).as("the interrupt status is set again").isTrue();
            return value.get();
        }

        interface Call<T> {
            T call() throws Exception;
        }

        static <T> Outcome<T> run(Call<T> call) {
            AtomicReference<T> value = new AtomicReference<>();
            AtomicReference<Throwable> error = new AtomicReference<>();
            AtomicBoolean interrupted = new AtomicBoolean();
            Thread thread = Thread.ofPlatform().unstarted(() -> {
                try {
                    value.set(call.call());
                } catch (Throwable t) {
                    error.set(t);
                }
                interrupted.set(Thread.currentThread().isInterrupted());
            });
            Outcome<T> out = new Outcome<>(thread, value, error, interrupted);
            thread.start();
            return out;
        }
    }

    /**
     * Answers from memory, except the first call of one operation ({@code acquire}, {@code release},
     * {@code lookup}; {@code none} for no hold), which is sent ({@link #sent}) and answered only when the
     * test calls {@link #answer()}. Counts the releases that released a live lock.
     */
    private static final class HeldLocks implements LockBackend {
        final InMemoryLockBackend memory;
        final String held;
        final AtomicBoolean holding = new AtomicBoolean();
        final CountDownLatch sent = new CountDownLatch(1);
        final CountDownLatch released = new CountDownLatch(1);
        final CompletableFuture<Void> gate = new CompletableFuture<>();
        final AtomicInteger releases = new AtomicInteger();

        HeldLocks(InMemoryLockBackend memory, String held) {
            this.memory = memory;
            this.held = held;
        }

        void answer() {
            gate.complete(null);
        }

        private <T> CompletionStage<T> call(String operation, Supplier<T> answer) {
            if (operation.equals(held) && holding.compareAndSet(false, true)) {
                sent.countDown();
                return gate.thenApply(v -> answer.get());
            }
            return CompletableFuture.completedFuture(answer.get());
        }

        @Override
        public String name() {
            return "held";
        }

        @Override
        public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
            return call("acquire", () -> memory.tryAcquire(key, lockId, ttl));
        }

        @Override
        public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
            return call("release", () -> {
                boolean done = memory.release(key, lockId);
                if (done) {
                    releases.incrementAndGet();
                    released.countDown();
                }
                return done;
            });
        }

        @Override
        public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
            return call("extend", () -> memory.extend(key, lockId, ttl));
        }

        @Override
        public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
            return call("lookup", () -> memory.lookup(key));
        }
    }

    /** {@link HeldLocks} for an idempotency backend: holds the first {@code claim} or {@code record}. */
    private static final class HeldIdempotency implements IdempotencyBackend {
        final IdempotencyBackend memory;
        final String held;
        final AtomicBoolean holding = new AtomicBoolean();
        final CountDownLatch sent = new CountDownLatch(1);
        final CompletableFuture<Void> gate = new CompletableFuture<>();

        HeldIdempotency(IdempotencyBackend memory, String held) {
            this.memory = memory;
            this.held = held;
        }

        void answer() {
            gate.complete(null);
        }

        private <T> CompletionStage<T> call(String operation, Supplier<CompletionStage<T>> answer) {
            if (operation.equals(held) && holding.compareAndSet(false, true)) {
                sent.countDown();
                return gate.thenCompose(v -> answer.get());
            }
            return answer.get();
        }

        @Override
        public String name() {
            return "held";
        }

        @Override
        public CompletionStage<IdempotencyEntry> claim(LockKey key, String fingerprint, long fence, Duration ttl,
                Duration retention, Duration timeout) {
            return call("claim", () -> memory.claim(key, fingerprint, fence, ttl, retention, timeout));
        }

        @Override
        public CompletionStage<OptionalLong> record(LockKey key, long fence, IdempotencyState state, byte[] result,
                Duration retention, Duration timeout) {
            return call("record", () -> memory.record(key, fence, state, result, retention, timeout));
        }

        @Override
        public CompletionStage<Optional<IdempotencyEntry>> lookup(LockKey key, Duration timeout) {
            return memory.lookup(key, timeout);
        }

        @Override
        public CompletionStage<Integer> purge(int limit, Duration timeout) {
            return memory.purge(limit, timeout);
        }
    }
}
