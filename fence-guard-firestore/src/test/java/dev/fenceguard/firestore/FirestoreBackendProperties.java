package dev.fenceguard.firestore;

import com.google.cloud.firestore.Firestore;
import dev.fenceguard.core.spi.LockBackend;
import dev.fenceguard.testkit.LockBackendProperties;
import java.time.Duration;

/** Stateful chains on the Firestore emulator against the reference model (expiry by the server's read time). */
class FirestoreBackendProperties extends LockBackendProperties {

    private static final Firestore DB = Emulator.newProject("props");
    private static final FirestoreLockBackend BACKEND = FenceGuardFirestore.builder(DB).build().lockBackend();

    @Override
    protected LockBackend backend() {
        return BACKEND;
    }

    @Override
    protected Duration expirySlack() {
        return Duration.ofMillis(120); // emulator latency
    }
}
