package dev.fenceguard.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.Lease;
import dev.fenceguard.core.LeaseSet;
import dev.fenceguard.core.LockClient;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockInfo;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.core.spi.LockBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The contract every {@link LockBackend} keeps (DESIGN §2), as a JUnit 5 suite. A backend's test
 * extends it and supplies {@link #backend()}; fence-guard runs it on every backend and configuration,
 * and you can run it on yours.
 *
 * <pre>{@code
 * class PostgresBackendContractTest extends LockBackendContract {
 *     protected LockBackend backend() { return FenceGuardJdbc.builder(dataSource).build().lockBackend(); }   // a new one on the same table
 * }
 * }</pre>
 *
 * <p>Keys are prefixed with a random {@link #keyPrefix()} so the suite runs on shared servers. Real
 * time is used, with TTLs of {@link #shortTtl()}: keep it well above the backend's round trip.
 *
 * <p>Most tests call the backend itself, with lock ids of their choosing (strangers, zombies). The
 * tests that take a {@link Face} run the same contract through a {@link LockClient}, once through its
 * blocking face and once through its asynchronous face, so every backend's suite proves both.
 *
 * @since 0.1
 */
public abstract class LockBackendContract {

    private final String prefix = "contract:" + UUID.randomUUID().toString().substring(0, 8) + ":";

    /** A backend on the store under test. Called once per test; may return the same instance. */
    protected abstract LockBackend backend();

    /**
     * A new backend instance on the same store, as after a restart of the client process. Defaults to
     * {@link #backend()}.
     */
    protected LockBackend restartedBackend() {
        return backend();
    }

    /** A TTL short enough to wait out in a test; default 400 ms. */
    protected Duration shortTtl() {
        return Duration.ofMillis(400);
    }

    /** Threads and acquisitions for {@link #concurrentAcquirersNeverShareALockAndNeverReuseAFence()}. */
    protected int concurrencyThreads() {
        return 8;
    }

    protected int concurrencyAttemptsPerThread() {
        return 60;
    }

    /** The prefix every key of this suite starts with. */
    protected String keyPrefix() {
        return prefix;
    }

    protected final LockKey key(String name) {
        return LockKey.of(keyPrefix() + name);
    }

    private static final Duration LONG = Duration.ofSeconds(30);

    @Test
    void grantsAFreshKeyAndReportsContentionAsAResult() {
        BlockingBackend b = BlockingBackend.of(backend());
        LockKey k = key("fresh");
        Optional<Grant> first = b.tryAcquire(k, LockId.random(), LONG);
        assertThat(first).isPresent();
        assertThat(first.get().fence()).isBetween(FenceToken.MIN_VALUE, FenceToken.MAX_VALUE);
        assertThat(first.get().expiresAt()).isAfter(Instant.now().minusSeconds(60));
        assertThat(b.tryAcquire(k, LockId.random(), LONG)).as("a live lease holds the key").isEmpty();
    }

    @Test
    void everyAcquisitionGetsAGreaterFenceThanAllBefore() {
        BlockingBackend b = BlockingBackend.of(backend());
        LockKey k = key("increasing");
        long last = 0;
        for (int i = 0; i < 20; i++) {
            LockId id = LockId.random();
            Grant g = b.tryAcquire(k, id, LONG).orElseThrow();
            assertThat(g.fence()).isGreaterThan(last);
            last = g.fence();
            assertThat(b.release(k, id)).isTrue();
        }
    }

    @Test
    void fencesKeepIncreasingAcrossAClientRestart() {
        LockKey k = key("restart");
        LockId id = LockId.random();
        long before = BlockingBackend.of(backend()).tryAcquire(k, id, LONG).orElseThrow().fence();
        BlockingBackend.of(backend()).release(k, id);
        long after = BlockingBackend.of(restartedBackend()).tryAcquire(k, LockId.random(), LONG).orElseThrow().fence();
        assertThat(after).isGreaterThan(before);
    }

    @Test
    void releaseSucceedsOnlyForTheLiveOwnerAndIsIdempotent() {
        BlockingBackend b = BlockingBackend.of(backend());
        LockKey k = key("release");
        LockId owner = LockId.random();
        Grant g = b.tryAcquire(k, owner, LONG).orElseThrow();
        assertThat(b.release(k, LockId.random())).as("a stranger cannot release").isFalse();
        assertThat(b.lookup(k)).map(LockInfo::fence).contains(FenceToken.of(g.fence()));
        assertThat(b.release(k, owner)).isTrue();
        assertThat(b.release(k, owner)).as("second release").isFalse();
        assertThat(b.lookup(k)).isEmpty();
    }

    @Test
    void extendKeepsTheFenceMovesTheExpiryAndIsOwnerOnly() throws InterruptedException {
        BlockingBackend b = BlockingBackend.of(backend());
        LockKey k = key("extend");
        LockId owner = LockId.random();
        Grant g = b.tryAcquire(k, owner, shortTtl()).orElseThrow();
        // The owner's extend comes first, one round trip after the acquire, so that it lands inside the short
        // TTL even on a loaded machine (a stranger's extend before it once pushed it past, 1 run of 20).
        Optional<Instant> extended = b.extend(k, owner, LONG);
        assertThat(extended).as("the owner's extend, within the first TTL").isPresent();
        assertThat(b.extend(k, LockId.random(), LONG)).as("a stranger cannot extend").isEmpty();
        assertThat(extended.get()).isAfter(g.expiresAt());
        Thread.sleep(shortTtl().multipliedBy(2).toMillis());
        LockInfo info = b.lookup(k).orElseThrow(() -> new AssertionError("extended lease expired at its first TTL"));
        assertThat(info.fence().value()).as("extend keeps the fence").isEqualTo(g.fence());
        assertThat(info.expiresAt()).isEqualTo(extended.get());
    }

    @Test
    void anExpiredLeaseIsFreeAndCannotBeReleasedOrRevived() throws InterruptedException {
        BlockingBackend b = BlockingBackend.of(backend());
        LockKey k = key("expiry");
        LockId zombie = LockId.random();
        Grant old = b.tryAcquire(k, zombie, shortTtl()).orElseThrow();
        Thread.sleep(shortTtl().multipliedBy(2).toMillis());
        assertThat(b.lookup(k)).isEmpty();
        assertThat(b.extend(k, zombie, LONG)).as("extend never revives an expired lease").isEmpty();
        assertThat(b.release(k, zombie)).as("release of an expired lease").isFalse();
        LockId successor = LockId.random();
        Grant next = b.tryAcquire(k, successor, LONG).orElseThrow();
        assertThat(next.fence()).isGreaterThan(old.fence());
        assertThat(b.release(k, zombie)).as("the zombie cannot release its successor").isFalse();
        assertThat(b.extend(k, zombie, LONG)).as("the zombie cannot extend its successor").isEmpty();
        assertThat(b.lookup(k)).map(i -> i.fence().value()).contains(next.fence());
    }

    @Test
    void lookupShowsOnlyLiveLocks() {
        BlockingBackend b = BlockingBackend.of(backend());
        LockKey k = key("lookup");
        assertThat(b.lookup(k)).isEmpty();
        LockId id = LockId.random();
        Grant g = b.tryAcquire(k, id, LONG).orElseThrow();
        LockInfo info = b.lookup(k).orElseThrow();
        assertThat(info.key()).isEqualTo(k);
        assertThat(info.fence().value()).isEqualTo(g.fence());
        assertThat(info.toString()).doesNotContain(id.value());
    }

    @Test
    void distinctKeysAreIndependentEvenWhenTheyLookAlike() {
        BlockingBackend b = BlockingBackend.of(backend());
        List<String> names = List.of("a", "A", "a ", "a/b", "a\\b", "{a}", "a}", "{a", "a:b", "a::b", "a%2Fb", "__name__",
                "fence:a", "lock:a", ".", "..", "ä", "a\u0308x", "'; DROP TABLE x; --", "\t", "\uD83D\uDD12", "x".repeat(300));
        Map<LockKey, Long> fences = new HashMap<>();
        for (String name : names) {
            LockKey k = key(name);
            Grant g = b.tryAcquire(k, LockId.random(), LONG)
                    .orElseThrow(() -> new AssertionError("key '" + k + "' collided with another key"));
            fences.put(k, g.fence());
        }
        assertThat(fences).hasSize(names.size());
        for (var e : fences.entrySet()) {
            assertThat(b.lookup(e.getKey())).map(i -> i.fence().value()).contains(e.getValue());
        }
    }

    @Test
    void theLongestKeyWorks() {
        BlockingBackend b = BlockingBackend.of(backend());
        String filler = "€".repeat((LockKey.MAX_UTF8_BYTES - keyPrefix().length()) / 3);
        LockKey k = key(filler + "x".repeat((LockKey.MAX_UTF8_BYTES - keyPrefix().length()) % 3));
        assertThat(k.utf8()).hasSize(LockKey.MAX_UTF8_BYTES);
        LockId id = LockId.random();
        assertThat(b.tryAcquire(k, id, LONG)).isPresent();
        assertThat(b.lookup(k)).isPresent();
        assertThat(b.release(k, id)).isTrue();
    }

    // --- The same contract through the lock client, once per face (blocking and asynchronous) ---

    private LockClient client() {
        return LockClient.builder(backend()).withMetrics(LockMetrics.none())
                .withBackoff(Duration.ofMillis(5), Duration.ofMillis(100)).build();
    }

    @ParameterizedTest(name = "{0} face")
    @EnumSource(Face.class)
    void theClientGrantsReleasesAndIssuesGreaterFences(Face face) throws InterruptedException {
        Face.Locks locks = face.over(client());
        String k = keyPrefix() + "client-" + face;
        Lease first = locks.tryAcquire(k, LONG).orElseThrow(() -> new AssertionError("a fresh key was refused"));
        assertThat(locks.tryAcquire(k, LONG)).as("a live lease holds the key").isEmpty();
        assertThat(locks.lookup(k)).map(LockInfo::fence).contains(first.fence());
        assertThat(locks.release(first)).isTrue();
        assertThat(locks.release(first)).as("second release").isFalse();
        assertThat(locks.lookup(k)).isEmpty();
        Lease second = locks.acquire(k, LONG, Duration.ofSeconds(5)).orElseThrow();
        assertThat(second.fence()).isGreaterThan(first.fence());
        assertThat(locks.release(second)).isTrue();
    }

    @ParameterizedTest(name = "{0} face")
    @EnumSource(Face.class)
    void theClientExtendsKeepingTheFenceAndNeverRevivesAnExpiredLease(Face face) throws InterruptedException {
        Face.Locks locks = face.over(client());
        String kept = keyPrefix() + "client-extended-" + face;
        String lapsed = keyPrefix() + "client-expired-" + face;
        Lease extended = locks.tryAcquire(kept, shortTtl()).orElseThrow();
        Instant firstExpiry = extended.expiresAt();
        // Extended right after its acquire, one round trip inside the short TTL even on a loaded machine.
        assertThat(locks.extend(extended, LONG)).isTrue();
        assertThat(extended.expiresAt()).isAfter(firstExpiry);
        Lease zombie = locks.tryAcquire(lapsed, shortTtl()).orElseThrow();
        Thread.sleep(shortTtl().multipliedBy(2).toMillis()); // both first TTLs run out
        assertThat(locks.lookup(kept)).as("extend keeps the fence").map(LockInfo::fence).contains(extended.fence());
        assertThat(locks.lookup(lapsed)).isEmpty();
        assertThat(locks.extend(zombie, LONG)).as("extend never revives an expired lease").isFalse();
        assertThat(zombie.isLost()).isTrue();
        Lease successor = locks.tryAcquire(lapsed, LONG).orElseThrow();
        assertThat(successor.fence()).isGreaterThan(zombie.fence());
        assertThat(locks.release(zombie)).as("the zombie cannot release its successor").isFalse();
        assertThat(locks.lookup(lapsed)).map(LockInfo::fence).contains(successor.fence());
        assertThat(locks.release(successor)).isTrue();
        assertThat(locks.release(extended)).isTrue();
    }

    @ParameterizedTest(name = "{0} face")
    @EnumSource(Face.class)
    void theClientRunsWorkUnderTheLockAndTakesSetsAllOrNothing(Face face) throws InterruptedException {
        Face.Locks locks = face.over(client());
        String k = keyPrefix() + "client-work-" + face;
        Optional<FenceToken> seen = locks.withLock(k, LONG, Duration.ofSeconds(5), lease -> {
            assertThat(lease.isValid()).isTrue();
            assertThat(locks.lookup(k)).map(LockInfo::fence).contains(lease.fence());
            return lease.fence();
        });
        assertThat(seen).isPresent();
        assertThat(locks.lookup(k)).as("released after the work").isEmpty();

        List<String> keys = List.of(k + ":c", k + ":a", k + ":b");
        Lease blocker = locks.tryAcquire(k + ":b", LONG).orElseThrow();
        assertThat(locks.acquireAll(keys, LONG, Duration.ZERO)).as(":b is held").isEmpty();
        assertThat(locks.release(blocker)).isTrue();
        LeaseSet set = locks.acquireAll(keys, LONG, Duration.ofSeconds(5)).orElseThrow();
        assertThat(set.leases()).extracting(l -> l.key().value()).containsExactly(k + ":a", k + ":b", k + ":c");
        for (Lease lease : set.leases()) {
            assertThat(locks.lookup(lease.key().value())).map(LockInfo::fence).contains(lease.fence());
            assertThat(locks.release(lease)).isTrue();
        }
    }

    @ParameterizedTest(name = "{0} face")
    @EnumSource(Face.class)
    void clientsWaitingForOneKeyNeverHoldItTogether(Face face) throws Exception {
        Face.Locks locks = face.over(client());
        String k = keyPrefix() + "client-hot-" + face;
        AtomicInteger holders = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<Long> fences = java.util.Collections.synchronizedList(new ArrayList<>());
        // Few rounds: a waiter takes a freed lock only at its next retry, so a hot key is slow by design.
        int threads = 4;
        int rounds = 5;
        onThreads(threads, () -> {
            for (int i = 0; i < rounds; i++) {
                Lease lease = locks.acquire(k, LONG, Duration.ofSeconds(30))
                        .orElseThrow(() -> new AssertionError("waited 30 s for a lock held for moments"));
                if (holders.incrementAndGet() != 1) {
                    overlaps.incrementAndGet();
                }
                fences.add(lease.fence().value());
                holders.decrementAndGet();
                if (!locks.release(lease)) {
                    overlaps.incrementAndGet();
                }
            }
        });
        assertThat(overlaps.get()).as("two holders of one key at once").isZero();
        assertThat(fences).hasSize(threads * rounds);
        for (int i = 1; i < fences.size(); i++) {
            assertThat(fences.get(i)).as("fences in holding order").isGreaterThan(fences.get(i - 1));
        }
        assertThat(locks.lookup(k)).isEmpty();
    }

    // --- Timeouts: the backend answers, the client alone gives up and undoes (see LockBackend's Javadoc) ---

    /**
     * A grant the server makes after the client stopped waiting for it: the caller hears {@code TIMEOUT}
     * once, and the lock is released once, by the client, so the key is free at once rather than after
     * a TTL. The link holds the acquire until the client has given up, then sends it (with a timeout of
     * its own long enough for any server), so the grant is real and its answer arrives late; it counts
     * every release that passes through it, and the backend has no other way to release.
     */
    @Test
    void aGrantAnsweredAfterTheClientGaveUpIsReportedAsTimeoutOnceAndReleasedOnce() throws Exception {
        LateLink link = new LateLink(backend());
        List<Throwable> failures = new ArrayList<>();
        LockClient locks = LockClient.builder(link).withMetrics(LockMetrics.none()).withCallTimeout(Duration.ofMillis(100)).build();
        String k = keyPrefix() + "late-grant";
        try {
            locks.tryAcquire(k, LONG);
        } catch (FenceGuardException e) {
            failures.add(e);
        }
        assertThat(failures).as("what the caller heard").singleElement()
                .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT));
        LockId late = link.sendHeld(); // the server grants it now; the answer reaches a client that gave up
        assertThat(link.granted.get(30, TimeUnit.SECONDS)).as("the server granted the late call").isPresent();
        assertThat(link.firstRelease.get(30, TimeUnit.SECONDS)).as("the client released the late grant").isTrue();
        assertThat(BlockingBackend.of(backend()).lookup(LockKey.of(k))).as("the key after the release").isEmpty();
        // A client with the default call timeout: the 100 ms above is only there to give up on the held call
        // soon, and a loaded machine can hold up a real call that long.
        LockClient after = LockClient.builder(link).withMetrics(LockMetrics.none()).build();
        Lease next = after.tryAcquire(k, LONG).orElseThrow(() -> new AssertionError("the key stayed locked by the late grant"));
        assertThat(after.release(next)).isTrue();
        assertThat(link.releases(late)).as("releases of the late grant's lock").isEqualTo(1);
        assertThat(link.releases(next.lockId())).as("releases of the next lease").isEqualTo(1);
    }

    /** A link to a backend that holds the first acquire until told, and counts releases per lock id. */
    private static final class LateLink implements LockBackend {
        private final LockBackend backend;
        private final Map<LockId, AtomicInteger> releases = new ConcurrentHashMap<>();
        private final CompletableFuture<Runnable> held = new CompletableFuture<>();
        final CompletableFuture<Optional<Grant>> granted = new CompletableFuture<>();
        final CompletableFuture<Boolean> firstRelease = new CompletableFuture<>();
        private volatile LockId heldId;

        LateLink(LockBackend backend) {
            this.backend = backend;
        }

        /** Sends the held acquire; its lock id. */
        LockId sendHeld() throws Exception {
            held.get(30, TimeUnit.SECONDS).run();
            return heldId;
        }

        int releases(LockId lockId) {
            AtomicInteger n = releases.get(lockId);
            return n == null ? 0 : n.get();
        }

        @Override
        public String name() {
            return backend.name();
        }

        @Override
        public CompletionStage<Optional<Grant>> tryAcquire(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
            if (heldId != null) {
                return backend.tryAcquire(key, lockId, ttl, timeout);
            }
            heldId = lockId;
            CompletableFuture<Optional<Grant>> answer = new CompletableFuture<>();
            held.complete(() -> backend.tryAcquire(key, lockId, ttl, LONG).whenComplete((grant, error) -> {
                if (error != null) {
                    granted.completeExceptionally(error);
                    answer.completeExceptionally(error);
                } else {
                    granted.complete(grant);
                    answer.complete(grant);
                }
            }));
            return answer;
        }

        @Override
        public CompletionStage<Boolean> release(LockKey key, LockId lockId, Duration timeout) {
            releases.computeIfAbsent(lockId, id -> new AtomicInteger()).incrementAndGet();
            return backend.release(key, lockId, timeout).whenComplete((released, error) -> {
                if (lockId.equals(heldId)) {
                    if (error != null) {
                        firstRelease.completeExceptionally(error);
                    } else {
                        firstRelease.complete(released);
                    }
                }
            });
        }

        @Override
        public CompletionStage<Optional<Instant>> extend(LockKey key, LockId lockId, Duration ttl, Duration timeout) {
            return backend.extend(key, lockId, ttl, timeout);
        }

        @Override
        public CompletionStage<Optional<LockInfo>> lookup(LockKey key, Duration timeout) {
            return backend.lookup(key, timeout);
        }
    }

    @Test
    void concurrentAcquirersNeverShareALockAndNeverReuseAFence() throws Exception {
        BlockingBackend b = BlockingBackend.of(backend());
        List<LockKey> keys = List.of(key("hot-0"), key("hot-1"), key("hot-2"));
        Map<LockKey, LockId> holders = new ConcurrentHashMap<>();
        Map<LockKey, List<Long>> issued = new ConcurrentHashMap<>();
        keys.forEach(k -> issued.put(k, java.util.Collections.synchronizedList(new ArrayList<>())));
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger acquired = new AtomicInteger();
        onThreads(concurrencyThreads(), () -> {
            for (int i = 0; i < concurrencyAttemptsPerThread(); i++) {
                LockKey k = keys.get(ThreadLocalRandom.current().nextInt(keys.size()));
                LockId id = LockId.random();
                Optional<Grant> g = b.tryAcquire(k, id, LONG);
                if (g.isEmpty()) {
                    continue;
                }
                acquired.incrementAndGet();
                issued.get(k).add(g.get().fence());
                if (holders.putIfAbsent(k, id) != null) {
                    overlaps.incrementAndGet();
                }
                holders.remove(k, id);
                if (!b.release(k, id)) {
                    overlaps.incrementAndGet();
                }
            }
        });
        assertThat(overlaps.get()).as("two live holders of one key at once").isZero();
        assertThat(acquired.get()).as("some acquisitions must succeed").isPositive();
        for (LockKey k : keys) {
            List<Long> fences = new ArrayList<>(issued.get(k));
            assertThat(new HashSet<>(fences)).as("no duplicate fence for %s", k).hasSameSizeAs(fences);
            // Fences are recorded while the lock is held, so the list is in holding order.
            for (int i = 1; i < fences.size(); i++) {
                assertThat(fences.get(i)).as("fences of %s in holding order: %s", k, fences).isGreaterThan(fences.get(i - 1));
            }
        }
    }

    /** The body of a test thread; may throw. */
    @FunctionalInterface
    private interface Body {
        void run() throws Exception;
    }

    /** Runs {@code body} on {@code threads} threads at once and rethrows the first failure. */
    private static void onThreads(int threads, Body body) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(pool.submit(() -> {
                    body.run();
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
