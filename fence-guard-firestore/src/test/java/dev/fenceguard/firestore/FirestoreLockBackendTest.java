package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.ErrorCode;
import dev.fenceguard.core.FenceGuardException;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockId;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.ManualTimeSource;
import dev.fenceguard.core.spi.Grant;
import dev.fenceguard.firestore.internal.DocIds;
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
        FirestoreLockBackend backend = FirestoreLockBackend.builder(DB).build();
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

    @Test
    void theSkewAllowanceKeepsOthersOutAfterTheHoldersExpiry() {
        ManualTimeSource clock = new ManualTimeSource(Instant.parse("2026-01-01T00:00:00Z"));
        FirestoreLockBackend backend = FirestoreLockBackend.builder(DB).withCollection("skewed")
                .withClockSkewAllowance(Duration.ofSeconds(2)).withTimeSource(clock).build();
        LockKey key = LockKey.of("skew");
        LockId holder = LockId.random();
        Grant g = backend.tryAcquire(key, holder, Duration.ofSeconds(10)).orElseThrow();
        assertThat(g.expiresAt()).isEqualTo(Instant.parse("2026-01-01T00:00:10Z"));
        clock.advance(Duration.ofSeconds(11));
        assertThat(backend.extend(key, holder, TTL)).as("expired for the holder").isEmpty();
        assertThat(backend.tryAcquire(key, LockId.random(), TTL)).as("still held for others within the allowance").isEmpty();
        clock.advance(Duration.ofSeconds(1));
        assertThat(backend.tryAcquire(key, LockId.random(), TTL).orElseThrow().fence()).isEqualTo(g.fence() + 1);
    }

    @Test
    void adversarialKeysGetSafeDistinctDocuments() {
        FirestoreLockBackend backend = FirestoreLockBackend.builder(DB).withCollection("adversarial").build();
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
        assertThat(backend.documentOf("a/b").getId()).isEqualTo("ka%2Fb");
    }

    @Test
    void exhaustedKeysFailClearlyAndTakeNoLock() throws Exception {
        FirestoreLockBackend backend = FirestoreLockBackend.builder(DB).withCollection("exhausted").build();
        backend.documentOf("old").set(Map.of("key", "old", "fence", FenceToken.MAX_VALUE)).get();
        assertThatThrownBy(() -> backend.tryAcquire(LockKey.of("old"), LockId.random(), TTL))
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
        assertThatThrownBy(() -> FirestoreLockBackend.builder(DB).withCollection("a/b")).hasMessageContaining("no '/'");
        assertThatThrownBy(() -> FirestoreLockBackend.builder(DB).withCollection("__x__")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> FirestoreLockBackend.builder(DB).withClockSkewAllowance(Duration.ofMillis(-1)))
                .hasMessageContaining("clock skew allowance");
        assertThatThrownBy(() -> FirestoreLockBackend.builder(DB).withTransactionAttempts(0)).hasMessageContaining("at least 1");
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
