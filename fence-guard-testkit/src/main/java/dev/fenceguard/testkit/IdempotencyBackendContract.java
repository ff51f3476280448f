package dev.fenceguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.StaleFenceException;
import dev.fenceguard.core.idempotency.FinalFailure;
import dev.fenceguard.core.idempotency.Fingerprint;
import dev.fenceguard.core.idempotency.IdempotencyConflictException;
import dev.fenceguard.core.idempotency.IdempotencyMetrics;
import dev.fenceguard.core.idempotency.IdempotencyResult;
import dev.fenceguard.core.idempotency.AsyncIdempotencyStore;
import dev.fenceguard.core.idempotency.IdempotencyStore;
import dev.fenceguard.core.idempotency.ResultCodec;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyEntry;
import dev.fenceguard.core.spi.IdempotencyState;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The idempotency-store contract as a JUnit 5 suite: every {@link IdempotencyBackend} runs it through an
 * {@link IdempotencyStore}, against a real server. Each test uses keys of its own, so the suite runs on
 * shared servers and the backend can keep state. Steps are ordered by latches; real time passes only
 * for claims and retention to run out.
 *
 * <pre>{@code
 * class PostgresIdempotencyContractTest extends IdempotencyBackendContract {
 *     protected IdempotencyBackend backend() { return FenceGuardJdbc.builder(dataSource).build().idempotencyBackend(); }
 * }
 * }</pre>
 *
 * @since 0.1
 */
@Timeout(120) // a guard against a hang, not a timing assertion
public abstract class IdempotencyBackendContract {

    private static final Duration LONG = Duration.ofSeconds(30);
    private static final ResultCodec<String> TEXT = ResultCodec.utf8();

    private final String run = "idem:" + UUID.randomUUID().toString().substring(0, 8) + ":";
    private IdempotencyBackend backend;

    /** The backend under test; called once per test. */
    protected abstract IdempotencyBackend backend();

    /** Whether {@link IdempotencyBackend#purge} deletes entries; false where they expire by themselves (Redis). */
    protected boolean purgeDeletes() {
        return true;
    }

    /** The claim TTL of the takeover tests, waited out in real time; default 300 ms. */
    protected Duration shortTtl() {
        return Duration.ofMillis(300);
    }

    /**
     * The call timeout of the stores this suite builds (each claim, record, lookup and purge); default
     * 5 s, the store's own default. A backend whose test server answers its first calls slowly (a
     * freshly started emulator on a loaded machine) may give more.
     */
    protected Duration callTimeout() {
        return Duration.ofSeconds(5);
    }

    private IdempotencyBackend real() {
        if (backend == null) {
            backend = backend();
        }
        return backend;
    }

    private AsyncIdempotencyStore store() {
        return IdempotencyStore.builder(real()).withCallTimeout(callTimeout()).withMetrics(IdempotencyMetrics.none()).build().async();
    }

    private String key(String name) {
        return run + name;
    }

    private static FenceToken f(long fence) {
        return FenceToken.of(fence);
    }

    private static <T> T join(CompletionStage<T> stage) {
        return stage.toCompletableFuture().join();
    }

    private static Throwable failureOf(CompletionStage<?> stage) {
        Throwable t = catchThrowable(() -> stage.toCompletableFuture().join());
        while (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static Supplier<CompletionStage<String>> counted(AtomicInteger runs, String value) {
        return () -> {
            runs.incrementAndGet();
            return CompletableFuture.completedFuture(value);
        };
    }

    private IdempotencyResult<String> exec(AsyncIdempotencyStore store, String key, Fingerprint fp, long fence, Duration ttl,
            Supplier<CompletionStage<String>> work) {
        return join(store.call(key, fp, f(fence), ttl, TEXT, work));
    }

    /** A call whose work has started and waits on {@code gateway}: a holder in the middle of its work. */
    private record Running(CompletionStage<IdempotencyResult<String>> call, CompletableFuture<String> gateway) {}

    private Running startHeld(AsyncIdempotencyStore store, String key, Fingerprint fp, long fence, Duration ttl) throws InterruptedException {
        CompletableFuture<Void> started = new CompletableFuture<>();
        CompletableFuture<String> gateway = new CompletableFuture<>();
        CompletionStage<IdempotencyResult<String>> call = store.call(key, fp, f(fence), ttl, TEXT, () -> {
            started.complete(null);
            return gateway;
        });
        // Whichever comes first: the work starting, or the call ending without it (its claim failed or
        // answered otherwise). The call's own failure is what a broken run must report.
        try {
            CompletableFuture.anyOf(started, call.toCompletableFuture()).get(20, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError("the call failed before its work started (key " + key + ", fence " + fence + ")",
                    e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("after 20 s neither did the work start nor did the call end (key " + key + ", fence "
                    + fence + ")");
        }
        assertThat(started).as("the work started; the call ended with %s instead", call.toCompletableFuture().getNow(null))
                .isDone();
        return new Running(call, gateway);
    }

    private Optional<IdempotencyEntry> lookup(String key) {
        return join(real().lookup(LockKey.of(key), LONG));
    }

    /** Claims again until the holder's claim has run out (real time passes), at most 20 s. */
    private IdempotencyResult<String> afterExpiry(AsyncIdempotencyStore store, String key, Fingerprint fp, long fence,
            Supplier<CompletionStage<String>> work) throws InterruptedException {
        Thread.sleep(shortTtl().toMillis()); // the claim running out: the only thing real time is for here
        long give = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            IdempotencyResult<String> r = exec(store, key, fp, fence, LONG, work);
            if (!(r instanceof IdempotencyResult.InProgress) || System.nanoTime() > give) {
                return r;
            }
            Thread.sleep(20); // clock skew between client and server: the backend's clock decides
        }
    }

    @Test
    void firstCallRunsTheWorkAndEveryRetryReplaysTheRecordedResult() {
        AsyncIdempotencyStore store = store();
        String key = key("replay");
        Fingerprint fp = Fingerprint.ofParts("charge", "order-1", "1999");
        AtomicInteger runs = new AtomicInteger();

        IdempotencyResult<String> first = exec(store, key, fp, 5, LONG, counted(runs, "ch_1"));
        IdempotencyResult<String> sameHolder = exec(store, key, fp, 5, LONG, counted(runs, "ch_2"));
        IdempotencyResult<String> newerHolder = exec(store, key, fp, 9, LONG, counted(runs, "ch_3"));
        IdempotencyResult<String> olderHolder = exec(store, key, fp, 2, LONG, counted(runs, "ch_4"));

        assertThat(first).isEqualTo(new IdempotencyResult.Executed<>("ch_1", f(5)));
        assertThat(List.of(sameHolder, newerHolder, olderHolder)).containsOnly(new IdempotencyResult.Replayed<>("ch_1", f(5)));
        assertThat(runs).hasValue(1);
        IdempotencyEntry entry = lookup(key).orElseThrow();
        assertThat(entry.state()).isEqualTo(IdempotencyState.COMPLETED);
        assertThat(entry.fingerprint()).isEqualTo(fp.hex());
        assertThat(entry.fence()).isEqualTo(5);
        assertThat(TEXT.decode(entry.result())).isEqualTo("ch_1");
    }

    @Test
    void aDifferentFingerprintUnderTheSameKeyIsAConflictAndChangesNothing() {
        AsyncIdempotencyStore store = store();
        String key = key("conflict");
        AtomicInteger runs = new AtomicInteger();
        exec(store, key, Fingerprint.ofParts("amount", "1999"), 5, LONG, counted(runs, "ch_1"));
        IdempotencyEntry before = lookup(key).orElseThrow();

        Throwable conflict = failureOf(store.call(key, Fingerprint.ofParts("amount", "2999"), f(7), LONG, TEXT,
                counted(runs, "ch_2")));

        assertThat(conflict).isInstanceOf(IdempotencyConflictException.class);
        assertThat(((FenceGuardException) conflict).code()).isEqualTo(ErrorCode.IDEMPOTENCY_CONFLICT);
        assertThat(conflict.getMessage()).contains(key).contains("different request fingerprint");
        assertThat(runs).hasValue(1);
        assertThat(lookup(key)).contains(before);
    }

    @Test
    void aRetryWhileTheFirstIsRunningGetsInProgressWithTheHoldersExpiry() throws Exception {
        AsyncIdempotencyStore store = store();
        String key = key("in-progress");
        Fingerprint fp = Fingerprint.ofParts("charge", "order-2");
        Running first = startHeld(store, key, fp, 5, LONG);
        IdempotencyEntry claim = lookup(key).orElseThrow();

        AtomicInteger runs = new AtomicInteger();
        IdempotencyResult<String> retry = exec(store, key, fp, 6, LONG, counted(runs, "ch_retry"));

        assertThat(retry).isEqualTo(new IdempotencyResult.InProgress<>(f(5), claim.expiresAt()));
        assertThat(claim.state()).isEqualTo(IdempotencyState.IN_PROGRESS);
        assertThat(runs).hasValue(0);
        first.gateway().complete("ch_first");
        assertThat(join(first.call())).isEqualTo(new IdempotencyResult.Executed<>("ch_first", f(5)));
        assertThat(exec(store, key, fp, 6, LONG, counted(runs, "ch_retry"))).isEqualTo(new IdempotencyResult.Replayed<>("ch_first", f(5)));
        assertThat(runs).hasValue(0);
    }

    @Test
    void aZombieThatFinishesAfterItsSuccessorRecordedCannotOverwriteTheResult() throws Exception {
        AsyncIdempotencyStore store = store();
        String key = key("zombie-late");
        Fingerprint fp = Fingerprint.ofParts("charge", "order-3");
        Running zombie = startHeld(store, key, fp, 5, shortTtl()); // then paused past its claim

        IdempotencyResult<String> successor = afterExpiry(store, key, fp, 6, () -> CompletableFuture.completedFuture("ch_successor"));
        zombie.gateway().complete("ch_zombie");
        Throwable refused = failureOf(zombie.call());

        assertThat(successor).isEqualTo(new IdempotencyResult.Executed<>("ch_successor", f(6)));
        assertThat(refused).isInstanceOf(StaleFenceException.class);
        assertThat(((StaleFenceException) refused).presentedFence()).isEqualTo(5);
        assertThat(((StaleFenceException) refused).currentFence()).isEqualTo(6);
        IdempotencyEntry entry = lookup(key).orElseThrow();
        assertThat(entry.fence()).isEqualTo(6);
        assertThat(TEXT.decode(entry.result())).isEqualTo("ch_successor");
    }

    @Test
    void aZombieThatFinishesWhileItsSuccessorRunsIsRefusedAndTheSuccessorRecords() throws Exception {
        AsyncIdempotencyStore store = store();
        String key = key("zombie-mid");
        Fingerprint fp = Fingerprint.ofParts("charge", "order-4");
        Running zombie = startHeld(store, key, fp, 5, shortTtl());
        CompletableFuture<String> successorGateway = new CompletableFuture<>();
        CountDownLatch successorStarted = new CountDownLatch(1);
        AtomicInteger attempts = new AtomicInteger();
        Thread.sleep(shortTtl().toMillis()); // the zombie's claim running out
        CompletionStage<IdempotencyResult<String>> successor = null;
        for (long give = System.nanoTime() + TimeUnit.SECONDS.toNanos(20); successor == null; ) {
            CompletionStage<IdempotencyResult<String>> attempt = store.call(key, fp, f(6), LONG, TEXT, () -> {
                attempts.incrementAndGet();
                successorStarted.countDown();
                return successorGateway;
            });
            IdempotencyResult<String> now = attempt.toCompletableFuture().getNow(null);
            if (now instanceof IdempotencyResult.InProgress && System.nanoTime() < give) {
                Thread.sleep(20); // the backend's clock has not passed the expiry yet
            } else {
                successor = attempt;
            }
        }
        assertThat(successorStarted.await(20, TimeUnit.SECONDS)).isTrue();

        zombie.gateway().complete("ch_zombie");
        Throwable refused = failureOf(zombie.call());
        successorGateway.complete("ch_successor");

        assertThat(refused).isInstanceOf(StaleFenceException.class);
        assertThat(join(successor)).isEqualTo(new IdempotencyResult.Executed<>("ch_successor", f(6)));
        assertThat(attempts).hasValue(1);
        assertThat(TEXT.decode(lookup(key).orElseThrow().result())).isEqualTo("ch_successor");
    }

    @Test
    void aNewerFenceDoesNotTakeOverALiveClaimAndAnOlderFenceIsStale() {
        IdempotencyBackend b = real();
        LockKey key = LockKey.of(key("live-claim"));
        String fp = Fingerprint.ofParts("x").hex();

        IdempotencyEntry first = join(b.claim(key, fp, 5, LONG, LONG, LONG));
        IdempotencyEntry again = join(b.claim(key, fp, 5, LONG, LONG, LONG));
        IdempotencyEntry newer = join(b.claim(key, fp, 6, LONG, LONG, LONG));

        assertThat(first.state()).isEqualTo(IdempotencyState.IN_PROGRESS);
        assertThat(first.fence()).isEqualTo(5);
        assertThat(again.fence()).as("the holder claiming again keeps the key").isEqualTo(5);
        assertThat(again.expiresAt()).isAfterOrEqualTo(first.expiresAt());
        assertThat(newer).as("a live claim is not taken over").isEqualTo(again);
        Throwable stale = failureOf(store().call(key.value(), new Fingerprint(fp), f(4), LONG, TEXT,
                () -> CompletableFuture.completedFuture("never")));
        assertThat(stale).isInstanceOf(StaleFenceException.class);
        assertThat(join(b.record(key, 4, IdempotencyState.COMPLETED, new byte[] {1}, LONG, LONG))).hasValue(5);
        assertThat(join(b.record(key, 6, IdempotencyState.COMPLETED, new byte[] {1}, LONG, LONG))).hasValue(5);
        assertThat(join(b.record(key, 5, IdempotencyState.COMPLETED, new byte[] {7}, LONG, LONG))).isEmpty();
        assertThat(join(b.record(key, 5, IdempotencyState.COMPLETED, new byte[] {8}, LONG, LONG)))
                .as("an outcome is recorded once").hasValue(5);
        assertThat(lookup(key.value()).orElseThrow().result()).containsExactly(7);
        assertThat(join(b.record(LockKey.of(key("never-claimed")), 5, IdempotencyState.COMPLETED, new byte[0], LONG, LONG)))
                .as("nothing to record into").hasValue(0);
        assertThat(lookup(key("never-claimed"))).isEmpty();
    }

    @Test
    void aRetryableFailureIsTakenOverAndAFinalFailureIsReplayed() {
        AsyncIdempotencyStore store = store();
        Fingerprint fp = Fingerprint.ofParts("charge", "order-5");
        String retryable = key("retryable");
        AtomicInteger runs = new AtomicInteger();
        Throwable timeout = failureOf(store.call(retryable, fp, f(5), LONG, TEXT, () -> {
            runs.incrementAndGet();
            return CompletableFuture.failedFuture(new IllegalStateException("gateway timed out"));
        }));
        assertThat(timeout).isInstanceOf(IllegalStateException.class).hasMessage("gateway timed out");
        assertThat(lookup(retryable).orElseThrow().state()).isEqualTo(IdempotencyState.FAILED_RETRYABLE);
        assertThat(failureOf(store.call(retryable, fp, f(4), LONG, TEXT, counted(runs, "never"))))
                .as("an older fence cannot take over").isInstanceOf(StaleFenceException.class);
        assertThat(exec(store, retryable, fp, 6, LONG, counted(runs, "ch_2"))).isEqualTo(new IdempotencyResult.Executed<>("ch_2", f(6)));
        assertThat(runs).hasValue(2);

        String declined = key("final");
        Throwable decline = failureOf(store.call(declined, fp, f(5), LONG, TEXT, () -> {
            runs.incrementAndGet();
            throw new FinalFailure("card declined");
        }));
        assertThat(decline).isInstanceOf(FinalFailure.class);
        assertThat(exec(store, declined, fp, 9, LONG, counted(runs, "never")))
                .isEqualTo(new IdempotencyResult.FailedFinally<>("card declined", f(5)));
        assertThat(runs).hasValue(3);
    }

    @Test
    void theBlockingFaceRunsTheWorkOnTheCallersThreadAndRecordsItsFailure() throws Exception {
        IdempotencyStore store = IdempotencyStore.builder(real()).withCallTimeout(callTimeout()).withMetrics(IdempotencyMetrics.none()).build();
        dev.fenceguard.core.LockClient locks = dev.fenceguard.core.LockClient.builder(new dev.fenceguard.core.memory.InMemoryLockBackend())
                .withMetrics(dev.fenceguard.core.LockMetrics.none()).build();
        String key = key("blocking");
        Fingerprint fp = Fingerprint.ofParts("refund", "order-6");
        Thread caller = Thread.currentThread();
        try (dev.fenceguard.core.Lease lease = locks.tryAcquire(key, LONG).orElseThrow()) {
            assertThatThrownBy(() -> store.call(key, fp, lease, TEXT, () -> {
                throw new java.io.IOException("connection reset");
            })).isInstanceOf(java.io.IOException.class).hasMessage("connection reset");
            IdempotencyResult<String> r = store.call(key, fp, lease, TEXT, () -> {
                assertThat(Thread.currentThread()).isSameAs(caller);
                return "rf_1";
            });
            assertThat(r).isEqualTo(new IdempotencyResult.Executed<>("rf_1", lease.fence()));
            assertThat(store.call(key, fp, lease, TEXT, () -> "rf_2")).isEqualTo(new IdempotencyResult.Replayed<>("rf_1", lease.fence()));
            dev.fenceguard.core.idempotency.IdempotencyInfo info = store.lookup(key).orElseThrow();
            assertThat(info.status()).as("lookup through the blocking face")
                    .isEqualTo(dev.fenceguard.core.idempotency.IdempotencyInfo.Status.COMPLETED);
            assertThat(info.fence()).isEqualTo(lease.fence());
            assertThat(info.fingerprint()).isEqualTo(fp);
            assertThat(info.key()).isEqualTo(key);
        }
        assertThat(store.lookup(key("never-claimed"))).isEmpty();
    }

    @Test
    void exactlyOneOfManyConcurrentClaimantsRunsTheWork() throws Exception {
        AsyncIdempotencyStore store = store();
        String key = key("race");
        Fingerprint fp = Fingerprint.ofParts("charge", "order-7");
        int n = 8;
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<Object>> answers = new ArrayList<>();
            for (int i = 1; i <= n; i++) {
                long fence = 100 + ThreadLocalRandom.current().nextInt(1, 50) * n + i; // distinct fences, random order
                answers.add(pool.submit(() -> {
                    go.await();
                    try {
                        return exec(store, key, fp, fence, LONG, counted(runs, "ch_" + fence));
                    } catch (RuntimeException e) {
                        Throwable t = e.getCause() != null ? e.getCause() : e;
                        return t;
                    }
                }));
            }
            go.countDown();
            List<Object> results = new ArrayList<>();
            for (Future<Object> a : answers) {
                results.add(a.get(60, TimeUnit.SECONDS));
            }
            assertThat(runs).hasValue(1);
            assertThat(results.stream().filter(r -> r instanceof IdempotencyResult.Executed)).hasSize(1);
            assertThat(results).allSatisfy(r -> assertThat(r).isInstanceOfAny(IdempotencyResult.Executed.class,
                    IdempotencyResult.Replayed.class, IdempotencyResult.InProgress.class, StaleFenceException.class));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void keysThatLookAlikeAndLargeResultsStayApart() {
        AsyncIdempotencyStore store = store();
        Fingerprint fp = Fingerprint.ofParts("k");
        List<String> keys = List.of(key("a"), key("a:idem"), key("{a}"), key("a}:idem"), key("%7Ba%7D"), key("ä/b"),
                key("x".repeat(LockKey.MAX_UTF8_BYTES - key("").length())));
        for (String k : keys) {
            exec(store, k, fp, 3, LONG, () -> CompletableFuture.completedFuture("for " + k));
        }
        for (String k : keys) {
            assertThat(lookup(k).map(e -> TEXT.decode(e.result()))).as("key %s", k).contains("for " + k);
        }
        byte[] big = new byte[IdempotencyStore.MAX_RESULT_BYTES];
        ThreadLocalRandom.current().nextBytes(big);
        IdempotencyResult<byte[]> stored = join(store.call(key("big"), fp, f(3), LONG, ResultCodec.bytes(),
                () -> CompletableFuture.completedFuture(big)));
        IdempotencyResult<byte[]> replay = join(store.call(key("big"), fp, f(4), LONG, ResultCodec.bytes(),
                () -> CompletableFuture.completedFuture(new byte[0])));
        assertThat(stored).isInstanceOf(IdempotencyResult.Executed.class);
        assertThat(replay).isInstanceOf(IdempotencyResult.Replayed.class);
        assertThat(replay.result().orElseThrow()).isEqualTo(big);

        Throwable tooBig = failureOf(store.call(key("too-big"), fp, f(3), LONG, ResultCodec.bytes(),
                () -> CompletableFuture.completedFuture(new byte[IdempotencyStore.MAX_RESULT_BYTES + 1])));
        assertThat(tooBig).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most " + IdempotencyStore.MAX_RESULT_BYTES);
        assertThat(lookup(key("too-big")).orElseThrow().state()).as("recorded retryable: the next attempt runs again")
                .isEqualTo(IdempotencyState.FAILED_RETRYABLE);
    }

    @Test
    void entriesAreForgottenAfterTheirRetentionAndPurgedInBoundedBatches() throws Exception {
        // Two seconds: the entry is looked up right after it is written (two calls), which a loaded machine
        // does well within that; with 200 ms the lookup came too late under load, 2 of 2 times.
        Duration retention = Duration.ofSeconds(2);
        AsyncIdempotencyStore store = IdempotencyStore.builder(real()).withRetention(retention).withCallTimeout(callTimeout())
                .withMetrics(IdempotencyMetrics.none()).build().async();
        Fingerprint fp = Fingerprint.ofParts("p");
        exec(store, key("purge-0"), fp, 3, Duration.ofMillis(1), () -> CompletableFuture.completedFuture("kept a while"));
        assertThat(lookup(key("purge-0"))).as("kept during its retention").isPresent();
        for (int i = 1; i < 5; i++) {
            exec(store, key("purge-" + i), fp, 3, Duration.ofMillis(1), () -> CompletableFuture.completedFuture("kept a while"));
        }
        Thread.sleep(retention.toMillis() + shortTtl().toMillis()); // retention running out
        for (int i = 0; i < 5; i++) {
            assertThat(lookup(key("purge-" + i))).as("entry %d after its retention", i).isEmpty();
        }
        AtomicInteger runs = new AtomicInteger();
        // Kept for an hour: it must outlive the purges below however slow the server is (with the short
        // retention it once expired during them on a loaded CI machine and was purged too).
        AsyncIdempotencyStore keeping = IdempotencyStore.builder(real()).withRetention(Duration.ofHours(1))
                .withCallTimeout(callTimeout()).withMetrics(IdempotencyMetrics.none()).build().async();
        assertThat(exec(keeping, key("purge-0"), Fingerprint.ofParts("another request"), 1, LONG, counted(runs, "again")))
                .as("a forgotten key is new again, whatever its fingerprint and fence")
                .isEqualTo(new IdempotencyResult.Executed<>("again", f(1)));
        if (!purgeDeletes()) {
            assertThat(join(store.purge(2))).isZero();
            return;
        }
        assertThat(join(store.purge(2))).as("a batch is bounded").isEqualTo(2);
        int more = 0;
        for (int batch = join(store.purge(100)); batch > 0; batch = join(store.purge(100))) {
            more += batch;
        }
        assertThat(more).as("the rest of this test's expired entries, and any other test's").isGreaterThanOrEqualTo(2);
        assertThat(lookup(key("purge-0"))).as("live entries are not purged").isPresent();
    }

    @Test
    void badInputFailsBeforeAnyIo() {
        CountingIdempotencyBackend counting = new CountingIdempotencyBackend(real());
        IdempotencyStore blocking = IdempotencyStore.builder(counting).withMetrics(IdempotencyMetrics.none()).build();
        AsyncIdempotencyStore store = blocking.async();
        Fingerprint fp = Fingerprint.ofParts("x");
        Supplier<CompletionStage<String>> work = () -> CompletableFuture.completedFuture("x");
        // each: what was tried, and the message it must give
        assertThatThrownBy(() -> store.call("", fp, f(1), LONG, TEXT, work)).as("empty key")
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.call("k".repeat(LockKey.MAX_UTF8_BYTES + 1), fp, f(1), LONG, TEXT, work)).as("oversize key")
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.call("a\0b", fp, f(1), LONG, TEXT, work)).as("key with NUL")
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.call(key("k"), fp, f(1), Duration.ofMillis(-5), TEXT, work)).as("negative TTL")
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("ttl must be at least 1 ms, was PT-0.005S");
        assertThatThrownBy(() -> store.call(key("k"), fp, f(1), Duration.ZERO, TEXT, work)).as("zero TTL")
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.call(key("k"), fp, f(1), Duration.ofNanos(1_500_000), TEXT, work)).as("sub-ms TTL")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("whole number of milliseconds");
        assertThatThrownBy(() -> store.call(key("k"), fp, f(1), LONG, TEXT, null)).as("null work")
                .isInstanceOf(NullPointerException.class).hasMessage("work");
        assertThatThrownBy(() -> store.call(key("k"), fp, f(1), LONG, null, work)).as("null codec")
                .isInstanceOf(NullPointerException.class).hasMessage("codec");
        assertThatThrownBy(() -> store.call(key("k"), null, f(1), LONG, TEXT, work)).as("null fingerprint")
                .isInstanceOf(NullPointerException.class).hasMessage("fingerprint");
        assertThatThrownBy(() -> store.purge(0)).as("empty purge batch")
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxEntries must be 1 to 10000, was 0");
        assertThatThrownBy(() -> store.purge(IdempotencyStore.MAX_PURGE_BATCH + 1)).as("oversize purge batch")
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> IdempotencyStore.builder(counting).withRetention(Duration.ofSeconds(-1))).as("negative retention")
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("retention must be whole milliseconds from 1 ms to 365 days, was PT-1S");
        assertThatThrownBy(() -> new Fingerprint("ABC")).as("upper-case fingerprint")
                .isInstanceOf(IllegalArgumentException.class).hasMessage("fingerprint must be lowercase hex, found 'A' at index 0");
        assertThatThrownBy(() -> new Fingerprint("")).as("empty fingerprint").isInstanceOf(IllegalArgumentException.class);
        ManualTimeSource time = new ManualTimeSource(Instant.parse("2026-01-01T00:00:00Z"));
        dev.fenceguard.core.LockClient locks = dev.fenceguard.core.LockClient.builder(new dev.fenceguard.core.memory.InMemoryLockBackend(time))
                .withTimeSource(time).withMetrics(dev.fenceguard.core.LockMetrics.none()).build();
        dev.fenceguard.core.Lease lapsed = locks.tryAcquire(key("lapsed"), Duration.ofSeconds(1)).orElseThrow();
        time.advance(Duration.ofSeconds(2));
        assertThatThrownBy(() -> blocking.call(key("lapsed"), fp, lapsed, TEXT, () -> "x")).as("a lease past its local deadline")
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the lease is no longer valid (idempotency key '" + key("lapsed") + "'): take a new one");
        assertThat(counting.calls()).as("backend calls made").isZero();
    }

    /** Counts the calls that reach the backend. */
    private static final class CountingIdempotencyBackend implements IdempotencyBackend {
        private final IdempotencyBackend delegate;
        private final AtomicInteger calls = new AtomicInteger();

        CountingIdempotencyBackend(IdempotencyBackend delegate) {
            this.delegate = delegate;
        }

        int calls() {
            return calls.get();
        }

        @Override
        public String name() {
            return delegate.name();
        }

        @Override
        public CompletionStage<IdempotencyEntry> claim(LockKey key, String fingerprint, long fence, Duration ttl, Duration retention,
                Duration timeout) {
            calls.incrementAndGet();
            return delegate.claim(key, fingerprint, fence, ttl, retention, timeout);
        }

        @Override
        public CompletionStage<java.util.OptionalLong> record(LockKey key, long fence, IdempotencyState state, byte[] result, Duration retention,
                Duration timeout) {
            calls.incrementAndGet();
            return delegate.record(key, fence, state, result, retention, timeout);
        }

        @Override
        public CompletionStage<Optional<IdempotencyEntry>> lookup(LockKey key, Duration timeout) {
            calls.incrementAndGet();
            return delegate.lookup(key, timeout);
        }

        @Override
        public CompletionStage<Integer> purge(int limit, Duration timeout) {
            calls.incrementAndGet();
            return delegate.purge(limit, timeout);
        }
    }
}
