package dev.fenceguard.firestore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.firestore.Blob;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.FenceToken;
import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.FlightStore;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.SingleflightContract;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Singleflight on the Firestore emulator: the contract over {@link FenceGuardFirestore#flightStore()}, with snapshot listeners for waiters. */
class FirestoreSingleflightTest extends SingleflightContract {

    private static final Firestore DB = Emulator.newProject("singleflight");
    private static final FenceGuardFirestore FIRESTORE = FenceGuardFirestore.builder(DB).withMetrics(LockMetrics.none()).build();

    /**
     * Each run starts an emulator of its own and a new client, whose first calls load and compile the
     * SDK's and the emulator's paths: on a loaded 2-core machine that took several seconds, and the
     * suite's first store call ran out of its 10 s (1 of 20 runs with busy cores). The warm-up makes
     * those first calls here, each with a bound of its own: the lock backend's warm-up (a read and an
     * empty commit), then a flight begun and published on a key of its own.
     */
    @BeforeAll
    static void warmUpClientAndEmulator() {
        Duration bound = Duration.ofMinutes(2);
        FIRESTORE.lockBackend().warmUp(bound).toCompletableFuture().join();
        FlightStore store = FIRESTORE.flightStore();
        LockKey k = LockKey.of("warm-up");
        store.begin(k, 1, bound).toCompletableFuture().join();
        store.publish(k, 1, new byte[] {1}, Duration.ofMinutes(1), bound).toCompletableFuture().join();
    }

    @Override
    protected LockBackend lockBackend() {
        return FIRESTORE.lockBackend();
    }

    @Override
    protected FlightStore newStore() {
        // One entry per simulated process, as each process builds its own; they share the client.
        return FenceGuardFirestore.builder(DB).withMetrics(LockMetrics.none()).build().flightStore();
    }

    @Test
    void theDocumentedFieldsHoldTheFlightsFenceAndTheResult() throws Exception {
        FirestoreFlightStore store = FenceGuardFirestore.builder(DB).withFlightCollection("flights_layout").build().flightStore();
        LockKey k = LockKey.of(key("a/b%"));
        store.begin(k, 41, Duration.ofSeconds(10)).toCompletableFuture().get();
        store.publish(k, 41, new byte[] {1, 2, 3}, Duration.ofMinutes(1), Duration.ofSeconds(10)).toCompletableFuture().get();
        // The stored layout is a compatibility promise (docs/singleflight.md): this test pins it.
        DocumentSnapshot s = store.documentOf(k.value()).get().get();
        assertThat(s.getId()).isEqualTo("k" + key("a%2Fb%25"));
        assertThat(s.getData()).containsOnlyKeys("key", "flightFence", "result", "resultFence", "resultExpiresAtMillis")
                .contains(Map.entry("key", k.value()), Map.entry("flightFence", 41L), Map.entry("resultFence", 41L),
                        Map.entry("result", Blob.fromBytes(new byte[] {1, 2, 3})));
    }

    @Test
    void aResultTooLargeForADocumentFailsWithAMappedError() {
        FlightStore store = newStore();
        LockKey k = LockKey.of(key("too-large"));
        assertThatThrownBy(() -> store.publish(k, 1, new byte[1_100_000], Duration.ofMinutes(1), Duration.ofSeconds(30))
                .toCompletableFuture().join()).cause().isInstanceOf(dev.fenceguard.core.FenceGuardException.class);
    }

    @Test
    void theFencedWritesOfTheSameEntryRefuseTheFlightDocuments() {
        FenceGuardFirestore entry = FenceGuardFirestore.builder(DB).withFlightCollection("flights_refused").build();
        assertThatThrownBy(() -> entry.fencedWrites().set(entry.flightStore().documentOf("k"), FenceToken.of(9), Map.of("flightFence", 1)))
                .as("a fenced write could rewind a flight's fence").isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("flights_refused");
    }

    @Test
    void badSettingsAreRefusedBeforeAnyCall() {
        FenceGuardFirestore.Builder b = FenceGuardFirestore.builder(DB);
        assertThatThrownBy(() -> b.withFlightCollection("a/b")).isInstanceOf(IllegalArgumentException.class);
        // The SDK writes '?' for a lone surrogate: "flights\uD800" would be the collection "flights?".
        assertThatThrownBy(() -> b.withFlightCollection("flights\uD800")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be valid Unicode, found an unpaired surrogate U+D800 at index 7");
        assertThatThrownBy(() -> b.withFlightCollection(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> FenceGuardFirestore.builder(DB).withFlightCollection("fence_guard_locks").build())
                .hasMessage("flightCollection 'fence_guard_locks' must differ from lockCollection 'fence_guard_locks' and "
                        + "idempotencyCollection 'fence_guard_idempotency': a flight and a lock or idempotency entry of the same "
                        + "key would share a document");
        assertThatThrownBy(() -> FenceGuardFirestore.builder(DB).withFlightCollection("fence_guard_idempotency").build())
                .as("the idempotency collection").hasMessageContaining("must differ from lockCollection");
    }
}
