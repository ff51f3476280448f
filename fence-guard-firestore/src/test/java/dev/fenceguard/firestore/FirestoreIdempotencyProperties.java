package dev.fenceguard.firestore;

import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.IdempotencyBackend;
import dev.fenceguard.testkit.IdempotencyBackendProperties;

/** Claim/record/lookup sequences on the Firestore emulator against the reference model. */
class FirestoreIdempotencyProperties extends IdempotencyBackendProperties {

    private static final FenceGuardFirestore FIRESTORE = FenceGuardFirestore.builder(Emulator.newProject("idemprops"))
            .withMetrics(LockMetrics.none()).build();

    @Override
    protected IdempotencyBackend backend() {
        return FIRESTORE.idempotencyBackend();
    }
}
