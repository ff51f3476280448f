package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyState;
import dev.fenceguard.testkit.IdempotencyBackendContract;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The idempotency contract on the Firestore emulator; the stored document, pinned. */
class FirestoreIdempotencyContractTest extends IdempotencyBackendContract {

    private static final Firestore DB = Emulator.newProject("idem");
    private static final FenceGuardFirestore FIRESTORE = FenceGuardFirestore.builder(DB).withMetrics(LockMetrics.none()).build();

    /**
     * Each run starts an emulator of its own and a new client: their first calls load and compile the
     * SDK's and the emulator's paths. On a loaded 2-core machine that took 6 to 9 s of calls (the first
     * claim alone 5.7 s), so the store's 5 s default timed out the first claims of the suite, and once
     * four in a row (20x loop with busy cores). The warm-up takes that cost before the tests, with a
     * bound of its own; the rest of the emulator's first-call cost (2.4 s for the first claim after the
     * warm-up, measured the same way) is what {@link #callTimeout()} leaves room for.
     */
    @BeforeAll
    static void warmUpClientAndEmulator() {
        FIRESTORE.lockBackend().warmUp(Duration.ofMinutes(2)).toCompletableFuture().join();
    }

    @Override
    protected IdempotencyBackend backend() {
        return FIRESTORE.idempotencyBackend();
    }

    @Override
    protected Duration callTimeout() {
        return Duration.ofSeconds(30);
    }

    @Test
    void theEntryIsOneDocumentInItsOwnCollection() throws Exception {
        FirestoreIdempotencyBackend b = FIRESTORE.idempotencyBackend();
        String name = "layout/order:42";
        Duration d = Duration.ofSeconds(30);
        b.claim(LockKey.of(name), "ab12", 7, d, Duration.ofSeconds(60), d).toCompletableFuture().join();
        b.record(LockKey.of(name), 7, IdempotencyState.COMPLETED, new byte[] {1, 2}, Duration.ofSeconds(60), d).toCompletableFuture().join();

        DocumentSnapshot doc = b.documentOf(name).get().get();
        assertThat(doc.getReference().getPath()).isEqualTo("fence_guard_idempotency/klayout%2Forder:42");
        Map<String, Object> data = doc.getData();
        assertThat(data).containsOnlyKeys(FirestoreIdempotencyBackend.fields());
        assertThat(data).containsEntry("key", name).containsEntry("state", "C").containsEntry("fingerprint", "ab12")
                .containsEntry("fence", 7L);
        assertThat(doc.getBlob("result").toBytes()).containsExactly(1, 2);
        assertThat(doc.getLong("retainUntilMillis") - doc.getLong("expiresAtMillis")).isEqualTo(60_000);
    }

    @Test
    void fencedWritesRefuseTheIdempotencyCollectionBeforeAnyIo() {
        assertThatThrownBy(() -> FIRESTORE.fencedWrites().set(DB.collection("fence_guard_idempotency").document("kcharge"),
                dev.fenceguard.core.FenceToken.of(99), Map.of("state", "C")))
                .as("a fenced write that would forge a recorded outcome").isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fence-guard's own key space").hasMessageContaining("forge a recorded outcome");
    }

    @Test
    void theIdempotencyCollectionMustNotBeTheLockCollection() {
        assertThatThrownBy(() -> FenceGuardFirestore.builder(DB).withLockCollection("same").withIdempotencyCollection("same").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("idempotencyCollection must differ from lockCollection 'same': an idempotency entry and a lock of "
                        + "the same key would share a document");
    }
}
