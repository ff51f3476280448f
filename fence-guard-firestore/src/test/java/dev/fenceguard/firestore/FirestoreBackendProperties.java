package dev.fenceguard.firestore;

import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendProperties;
import java.time.Duration;

/** Stateful chains on the Firestore emulator against the reference model (50 ms skew allowance). */
class FirestoreBackendProperties extends LockBackendProperties {

    private static final Firestore DB = Emulator.newProject("props");
    private static final FirestoreLockBackend BACKEND = FirestoreLockBackend.builder(DB)
            .withClockSkewAllowance(Duration.ofMillis(50)).build();

    @Override
    protected LockBackend backend() {
        return BACKEND;
    }

    @Override
    protected Duration expirySlack() {
        return Duration.ofMillis(120); // the skew allowance plus emulator latency
    }
}
