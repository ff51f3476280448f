package dev.fenceguard.firestore;

import dev.fenceguard.core.LockKey;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.core.spi.IdempotencyState;
import dev.fenceguard.testkit.IdempotencyBackendProperties;
import java.time.Duration;
import net.jqwik.api.lifecycle.BeforeContainer;

/** Claim/record/lookup sequences on the Firestore emulator against the reference model. */
class FirestoreIdempotencyProperties extends IdempotencyBackendProperties {

    private static final FenceGuardFirestore FIRESTORE = FenceGuardFirestore.builder(Emulator.newProject("idemprops"))
            .withMetrics(LockMetrics.none()).build();

    /**
     * Each run starts an emulator of its own and a new client, whose first calls load and compile the
     * SDK's and the emulator's paths: on a heavily loaded 2-core machine the first claim of the
     * properties ran out of its 30 s (3 of 6 runs of a loop). The warm-up makes those first calls here,
     * each with a bound of its own: the lock backend's warm-up, then a claim and a record of a key of
     * its own.
     */
    @BeforeContainer
    static void warmUpClientAndEmulator() {
        Duration bound = Duration.ofMinutes(2);
        FIRESTORE.lockBackend().warmUp(bound).toCompletableFuture().join();
        IdempotencyBackend b = FIRESTORE.idempotencyBackend();
        LockKey k = LockKey.of("warm-up");
        b.claim(k, "00", 1, bound, bound, bound).toCompletableFuture().join();
        b.record(k, 1, IdempotencyState.COMPLETED, new byte[0], bound, bound).toCompletableFuture().join();
    }

    @Override
    protected IdempotencyBackend backend() {
        return FIRESTORE.idempotencyBackend();
    }
}
