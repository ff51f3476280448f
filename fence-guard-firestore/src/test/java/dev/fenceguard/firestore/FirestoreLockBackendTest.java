package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.TimeSource;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.firestore.internal.DocIds;
import dev.fenceguard.testkit.BlockingBackend;
import io.grpc.Status;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

class FirestoreLockBackendTest {

    private static final Firestore DB = Emulator.newProject("backend");
    private static final Duration TTL = Duration.ofSeconds(30);

    @AfterAll
    static void close() throws Exception {
        DB.close();
    }

    @Test
    void eightThreadsContendingForOneKeyNeverShareItOrAFence() throws Exception {
        BlockingBackend backend = BlockingBackend.of(FenceGuardFirestore.builder(DB).build().lockBackend());
        LockKey key = LockKey.of("hot");
        Map<String, LockId> holder = new ConcurrentHashMap<>();
        List<Long> fences = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger overlaps = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < 25; i++) {
                        LockId id = LockId.random();
                        Optional<Grant> g = backend.tryAcquire(key, id, TTL);
                        if (g.isPresent()) {
                            fences.add(g.get().fence());
                            if (holder.putIfAbsent("k", id) != null) {
                                overlaps.incrementAndGet();
                            }
                            holder.remove("k", id);
                            assertThat(backend.release(key, id)).isTrue();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(overlaps.get()).isZero();
        assertThat(fences).isNotEmpty();
        assertThat(new HashSet<>(fences)).hasSameSizeAs(fences);
        for (int i = 1; i < fences.size(); i++) {
            assertThat(fences.get(i)).as("holding order %s", fences).isGreaterThan(fences.get(i - 1));
        }
    }

    /** A client whose wall clock is {@code offset} away from the real one (the emulator runs on this host). */
    private static BlockingBackend clientWithClockOff(Duration offset, String collection) {
        TimeSource off = new TimeSource() {
            @Override
            public Instant now() {
                return Instant.now().plus(offset);
            }

            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public void sleep(Duration d) throws InterruptedException {
                Thread.sleep(d);
            }
        };
        return BlockingBackend.of(FenceGuardFirestore.builder(DB).withLockCollection(collection).withTimeSource(off).build().lockBackend());
    }

    /** Polls the server's read time (the clock the backend judges by) until it is past {@code instant}. */
    private static void awaitServerTimePast(Instant instant) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (DB.collection("clock").document("probe").get().get().getReadTime().toDate().toInstant().compareTo(instant) <= 0) {
            assertThat(System.nanoTime() - deadline).as("server time never passed %s", instant).isNegative();
            Thread.sleep(20);
        }
    }

    private static final Duration TEN_MINUTES = Duration.ofMinutes(10);

    @Test
    void aLiveLockIsNotTakenOverByAClientWhoseClockRunsTenMinutesFast() {
        BlockingBackend holder = clientWithClockOff(Duration.ZERO, "fastclock");
        BlockingBackend fast = clientWithClockOff(TEN_MINUTES, "fastclock");
        LockKey key = LockKey.of("live");
        LockId id = LockId.random();
        Grant g = holder.tryAcquire(key, id, TTL).orElseThrow();
        assertThat(fast.tryAcquire(key, LockId.random(), TTL)).as("live for 30 s by the server's clock").isEmpty();
        assertThat(fast.lookup(key)).as("the fast client sees the live lock").hasValueSatisfying(info -> {
            assertThat(info.fence().value()).isEqualTo(g.fence());
            assertThat(info.expiresAt()).isEqualTo(g.expiresAt());
        });
        assertThat(fast.release(key, LockId.random())).isFalse();
        assertThat(holder.extend(key, id, TTL)).isPresent();
        assertThat(holder.release(key, id)).isTrue();
    }

    @Test
    void anExpiredLockIsTakenOverByAClientWhoseClockRunsTenMinutesSlow() throws Exception {
        BlockingBackend holder = clientWithClockOff(Duration.ZERO, "slowclock");
        BlockingBackend slow = clientWithClockOff(TEN_MINUTES.negated(), "slowclock");
        LockKey key = LockKey.of("expired");
        LockId id = LockId.random();
        Grant g = holder.tryAcquire(key, id, Duration.ofMillis(300)).orElseThrow();
        awaitServerTimePast(g.expiresAt());
        assertThat(slow.lookup(key)).as("expired by the server's clock").isEmpty();
        Grant taken = slow.tryAcquire(key, LockId.random(), TTL).orElseThrow(() -> new AssertionError("the slow client was refused"));
        assertThat(taken.fence()).isEqualTo(g.fence() + 1);
        assertThat(holder.extend(key, id, TTL)).as("the old holder cannot extend").isEmpty();
        assertThat(holder.release(key, id)).isFalse();
    }

    @Test
    void aHolderWhoseClockRunsSlowCannotExtendOrReleaseAnExpiredLease() throws Exception {
        BlockingBackend slow = clientWithClockOff(TEN_MINUTES.negated(), "slowholder");
        LockKey key = LockKey.of("expired");
        LockId id = LockId.random();
        Grant g = slow.tryAcquire(key, id, Duration.ofMillis(300)).orElseThrow();
        awaitServerTimePast(g.expiresAt());
        assertThat(slow.extend(key, id, TTL)).as("extend never revives an expired lease").isEmpty();
        assertThat(slow.release(key, id)).isFalse();
        assertThat(slow.lookup(key)).isEmpty();
    }

    @Test
    void expiryInstantsFollowTheServersClockWhateverTheClientsClock() {
        BlockingBackend slow = clientWithClockOff(TEN_MINUTES.negated(), "expiry");
        BlockingBackend fast = clientWithClockOff(TEN_MINUTES, "expiry");
        LockKey key = LockKey.of("agree");
        LockId id = LockId.random();
        Instant before = Instant.now();
        Grant g = slow.tryAcquire(key, id, TTL).orElseThrow();
        Instant after = Instant.now();
        // the emulator shares this host's clock: the expiry is its read time + ttl, not the slow clock's
        assertThat(g.expiresAt()).isBetween(before.plus(TTL).minusSeconds(2), after.plus(TTL).plusSeconds(2));
        assertThat(fast.lookup(key).orElseThrow().expiresAt()).isEqualTo(g.expiresAt());
        before = Instant.now();
        Instant extended = slow.extend(key, id, Duration.ofMinutes(2)).orElseThrow();
        after = Instant.now();
        assertThat(extended).isBetween(before.plus(Duration.ofMinutes(2)).minusSeconds(2), after.plus(Duration.ofMinutes(2)).plusSeconds(2));
        assertThat(fast.lookup(key).orElseThrow().expiresAt()).as("lookup agrees with extend").isEqualTo(extended);
        assertThat(slow.lookup(key).orElseThrow().expiresAt()).isEqualTo(extended);
        assertThat(fast.extend(key, id, TTL)).as("the same lease extended through a fast client").isPresent();
        assertThat(fast.release(key, id)).isTrue();
        assertThat(slow.lookup(key)).isEmpty();
    }

    @Test
    void adversarialKeysGetSafeDistinctDocuments() {
        FirestoreLockBackend async = FenceGuardFirestore.builder(DB).withLockCollection("adversarial").build().lockBackend();
        BlockingBackend backend = BlockingBackend.of(async);
        List<String> keys = List.of("a/b", "a%2Fb", "/", "//", ".", "..", "__name__", "__x__", "k", "ka", "%", "%25",
                "日本語/キー", "\uD83D\uDD12/\uD83D\uDD12", "/".repeat(512), "%".repeat(512), "/".repeat(511) + "a");
        for (String k : keys) {
            assertThat(backend.tryAcquire(LockKey.of(k), LockId.random(), TTL)).as("key %s", k).isPresent();
        }
        List<String> ids = keys.stream().map(k -> DocIds.of(LockKey.of(k))).toList();
        assertThat(new HashSet<>(ids)).hasSameSizeAs(ids);
        assertThat(ids).allSatisfy(id -> {
            assertThat(id).doesNotContain("/").isNotIn(".", "..").doesNotStartWith("__");
            assertThat(id.getBytes(java.nio.charset.StandardCharsets.UTF_8).length).isLessThanOrEqualTo(1500);
        });
        assertThat(DocIds.of(LockKey.of("/".repeat(512)))).startsWith("h").hasSize(65);
        assertThat(async.documentOf("a/b").getId()).isEqualTo("ka%2Fb");
    }

    @Test
    void exhaustedKeysFailClearlyAndTakeNoLock() throws Exception {
        FirestoreLockBackend backend = FenceGuardFirestore.builder(DB).withLockCollection("exhausted").build().lockBackend();
        backend.documentOf("old").set(Map.of("key", "old", "fence", FenceToken.MAX_VALUE)).get();
        assertThatThrownBy(() -> BlockingBackend.of(backend).tryAcquire(LockKey.of("old"), LockId.random(), TTL))
                .isInstanceOfSatisfying(FenceGuardException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FENCE_EXHAUSTED));
        assertThat(backend.documentOf("old").get().get().getString("lockId")).isNull();
    }

    @Test
    void grpcStatusCodesMapToCoreCodes() {
        assertThat(code(Status.DEADLINE_EXCEEDED)).isEqualTo(ErrorCode.TIMEOUT);
        assertThat(code(Status.UNAVAILABLE)).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(code(Status.ABORTED)).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(code(Status.PERMISSION_DENIED)).isEqualTo(ErrorCode.AUTH);
        assertThat(code(Status.UNAUTHENTICATED)).isEqualTo(ErrorCode.AUTH);
        assertThat(code(Status.INVALID_ARGUMENT)).isEqualTo(ErrorCode.INVALID_ARGUMENT);
        assertThat(code(Status.INTERNAL)).isEqualTo(ErrorCode.INTERNAL);
    }

    @Test
    void badOptionsAreRefused() {
        FenceGuardFirestore.Builder builder = FenceGuardFirestore.builder(DB);
        assertThatThrownBy(() -> builder.withLockCollection("a/b")).hasMessage("lockCollection must be a single Firestore"
                + " collection id (no '/', not '.' or '..', not __x__, at most 1500 bytes), was 'a/b'");
        assertThatThrownBy(() -> builder.withLockCollection("__x__")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.withLockCollection(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> builder.withWriteAttempts(0)).hasMessage("writeAttempts must be at least 1, was 0");
        assertThatThrownBy(() -> builder.withCallTimeout(Duration.ZERO))
                .hasMessage("callTimeout must be between 1 ms and 10 minutes, was PT0S");
        assertThatThrownBy(() -> builder.withCallTimeout(Duration.ofMinutes(11))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.withDeletedField("_fence")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.withFenceField("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.withFenceField("meta.fence"))
                .hasMessage("fenceField must be a plain top-level field name (none of . ` ~ * / [ ]), was 'meta.fence'");
        assertThatThrownBy(() -> builder.withDeletedField("a[0]")).hasMessageContaining("deletedField must be a plain top-level field name");
        assertThatThrownBy(() -> FenceGuardFirestore.builder(null)).isInstanceOf(NullPointerException.class);
        assertThat(builder.build().lockBackend().documentOf("k").getParent().getId()).as("nothing changed by the refusals")
                .isEqualTo("fence_guard_locks");
    }

    private static ErrorCode code(Status status) {
        try {
            dev.fenceguard.firestore.internal.FirestoreErrors.await(
                    com.google.api.core.ApiFutures.immediateFailedFuture(status.asRuntimeException()), "k", "op");
        } catch (FenceGuardException e) {
            assertThat(e.key()).contains("k");
            return e.code();
        }
        throw new AssertionError("a failed future must throw");
    }
}
